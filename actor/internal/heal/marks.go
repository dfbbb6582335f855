package heal

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// marks indexes the Nodes by machine-controller's marks naming a Machine:
// it writes them on the Node before it writes the Machine's
// status.nodeRef, so they tie the two together while machine-controller
// lags. A Node some Machine's nodeRef names is that Machine's alone: a
// stale mark on it (an address reused by a new server) ties it to no
// other, or a working Node could hold back a Machine that never joined.
type marks struct {
	linked    map[string]bool // Nodes a nodeRef names
	byUID     map[types.UID][]Node
	byMachine map[string][]Node // "namespace/name"
}

func indexMarks(o Observed) marks {
	k := marks{linked: map[string]bool{}, byUID: map[types.UID][]Node{}, byMachine: map[string][]Node{}}
	for _, m := range o.Machines {
		if m.NodeName != "" {
			k.linked[m.NodeName] = true
		}
	}
	for _, n := range o.Nodes {
		if k.linked[n.Name] {
			continue
		}
		if n.OwnerUID != "" {
			k.byUID[n.OwnerUID] = append(k.byUID[n.OwnerUID], n)
		}
		if n.OwnerMachine != "" {
			k.byMachine[n.OwnerMachine] = append(k.byMachine[n.OwnerMachine], n)
		}
	}
	return k
}

// ownedBy returns, by name, the Nodes no nodeRef names that bear m's
// marks: m's name (a Hetzner server, and so its Node, is named after its
// Machine), m's UID in the owned-by label, or m's namespace/name in the
// machine annotation.
func (k marks) ownedBy(o Observed, m Machine) []Node {
	var out []Node
	if n, ok := o.Nodes[m.Name]; ok && !k.linked[n.Name] {
		out = append(out, n)
	}
	if m.UID != "" {
		out = append(out, k.byUID[m.UID]...)
	}
	out = append(out, k.byMachine[o.Namespace+"/"+m.Name]...)
	slices.SortFunc(out, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b Node) bool { return a.Name == b.Name })
}

// markOf names the mark that ties n to m, for a report.
func markOf(m Machine, n Node) string {
	switch {
	case n.Name == m.Name:
		return "named after it"
	case m.UID != "" && n.OwnerUID == m.UID:
		return "its UID in label machine-controller/owned-by"
	}
	return "annotation cluster.k8s.io/machine"
}
