// +k8s:deepcopy-gen=package

// Package kubeapi is the part of the built-in Kubernetes API the observer
// reads, on client-go's REST client, with kinds of its own that hold only
// the fields the agent reads or writes.
//
// client-go's generated clientset registers every built-in API group when the
// process starts, whether or not it is used: that init work and the code it
// touches held about 10 MiB of the observer's resident memory before it read
// a single object, and k8s.io/api/core/v1 alone, which registers every core
// kind, a further 3.3 MB of binary and about 1.8 MiB resident (test/bench
// measures the resident figures). The kinds are declared in types.go.
// Nodes, events and pods, which a cluster has thousands of, come in protobuf
// and are read by partial decoders (decode.go, over wire.go's field walker);
// the few others come in JSON. Either way a kind keeps the same fields. The
// actor still links the clientset, because tools/leaderelection does.
//
// # Scope
//
// The kinds are frozen at those here: Node, Event and Pod (as PodPhase) in
// protobuf, and ConfigMap, Secret, Lease, CertificateSigningRequest and Pod
// in JSON. A kind may gain a field the agent starts to read; in a protobuf
// kind, fieldnumbers_test.go fails until the field's number is pinned, and
// the fuzz targets' expectations (asNode, asEvent, asPhase) must read it
// too. Stop extending the package, and go back to k8s.io/api's types and
// client-go's typed clients, when any of these holds:
//
//   - The agent needs another kind. Each kind here is a copy of part of an
//     API schema that only this repository keeps.
//   - The agent must update an object it read. These kinds drop every field
//     they do not name, so an Update would erase the rest. The one write,
//     creating the identity Secret, names every field the Secret gets.
//   - The observer links a k8s.io/api package anyway (test/release's
//     TestObserver_LinksNoAPITypesPackage says so): the memory this package
//     saves is then spent all the same.
//
// Keep the PodPhase decoder in every case: what it saves is the CPU of
// decoding every pod of a large cluster, whatever the binary links.
//
// The deep copies every runtime.Object needs are generated
// (zz_generated.deepcopy.go); TestDeepCopy_GeneratedFileIsCurrent fails
// when the kinds change and the file was not generated again. The one
// exception is List, every kind's list: deepcopy-gen does not read generic
// types, so its copy is written in list.go over the items' generated ones,
// and TestKinds_DeepCopiesShareNothing checks it with the rest.
package kubeapi

//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.37.2 --output-file zz_generated.deepcopy.go .
