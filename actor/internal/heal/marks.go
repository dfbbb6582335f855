package heal

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// marks indexes the Nodes by machine-controller's marks naming a Machine:
// it writes them on the Node before it writes the Machine's
// status.nodeRef, so they tie the two together while machine-controller
// lags.
type marks struct {
	byUID     map[types.UID][]Node
	byMachine map[string][]Node // "namespace/name"
}

func indexMarks(nodes map[string]Node) marks {
	k := marks{byUID: map[types.UID][]Node{}, byMachine: map[string][]Node{}}
	for _, n := range nodes {
		if n.OwnerUID != "" {
			k.byUID[n.OwnerUID] = append(k.byUID[n.OwnerUID], n)
		}
		if n.OwnerMachine != "" {
			k.byMachine[n.OwnerMachine] = append(k.byMachine[n.OwnerMachine], n)
		}
	}
	return k
}

// ownedBy returns, by name, the Nodes that bear m's marks: m's name (a
// Hetzner server, and so its Node, is named after its Machine), m's UID in
// the owned-by label, or m's namespace/name in the machine annotation.
func (k marks) ownedBy(o Observed, m Machine) []Node {
	var out []Node
	if n, ok := o.Nodes[m.Name]; ok {
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
