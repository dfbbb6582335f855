package cluster

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

// TestPodStore_CountsLikeAMapOfKeysUnderRandomChurn drives the store and a
// plain map from key to phase through the same random adds, phase changes,
// deletes (of objects, records and tombstones) and relists, and asks after
// every step that the beat's counts agree, that a change is signalled
// exactly when the counts could have moved, and that namespaces whose last
// pod went are forgotten.
func TestPodStore_CountsLikeAMapOfKeysUnderRandomChurn(t *testing.T) {
	phases := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, "", "Bogus"}
	rng := rand.New(rand.NewPCG(1, 2))
	signals := 0
	store := newPodStore(func() { signals++ })
	model := map[string]string{}
	maxNamespaces := 0

	randomPod := func() *kubeapi.PodPhase {
		return podPhase(fmt.Sprintf("ns-%d", rng.IntN(12)), fmt.Sprintf("p-%d", rng.IntN(40)), phases[rng.IntN(len(phases))])
	}
	anyKey := func() string {
		for k := range model {
			return k
		}
		return "ns-0/p-0"
	}
	for step := range 20_000 {
		before := signals
		var op string
		wantSignal := false
		switch r := rng.IntN(100); {
		case r < 55:
			p := randomPod()
			key := p.Namespace + "/" + p.Name
			old, had := model[key]
			wantSignal = !had || PhaseOf(old) != PhaseOf(p.Status.Phase)
			op = "add " + key
			if err := store.Add(p); err != nil {
				t.Fatal(err)
			}
			model[key] = p.Status.Phase
		case r < 85:
			key := anyKey()
			ns, name, _ := strings.Cut(key, "/")
			_, had := model[key]
			wantSignal = had
			var obj any
			switch rng.IntN(3) {
			case 0:
				obj = podPhase(ns, name, corev1.PodRunning)
			case 1:
				obj = &Pod{Key: key, Phase: PhaseRunning}
			default:
				obj = cache.DeletedFinalStateUnknown{Key: key, Obj: &Pod{Key: key}}
			}
			op = fmt.Sprintf("delete %s as %T", key, obj)
			if err := store.Delete(obj); err != nil {
				t.Fatal(err)
			}
			delete(model, key)
		case r < 99:
			// A pod written again with its phase: counts stay, no signal.
			key := anyKey()
			phase, had := model[key]
			if !had {
				continue
			}
			ns, name, _ := strings.Cut(key, "/")
			op = "update unchanged " + key
			if err := store.Update(podPhase(ns, name, corev1.PodPhase(phase))); err != nil {
				t.Fatal(err)
			}
		default:
			op = "relist"
			wantSignal = true
			model = map[string]string{}
			var items []any
			for range rng.IntN(60) {
				p := randomPod()
				model[p.Namespace+"/"+p.Name] = p.Status.Phase
				items = append(items, p)
			}
			// The relist may name a pod twice; the later one wins, as in the model.
			if err := store.Replace(items, "7"); err != nil {
				t.Fatal(err)
			}
		}
		if got := signals > before; got != wantSignal {
			t.Fatalf("step %d (%s): signalled %v, want %v", step, op, got, wantSignal)
		}
		want := countModel(model)
		if got := store.Summary(true); !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d (%s): counts %+v, want %+v", step, op, got, want)
		}
		if got := store.Summary(false); got.ByNamespace != nil || got.Total != want.Total {
			t.Fatalf("step %d (%s): without namespaces got %+v", step, op, got)
		}
		live := len(want.ByNamespace)
		maxNamespaces = max(maxNamespaces, live)
		if c := store.counts; len(c.slots) != live || len(c.nsNames)-len(c.free) != live || len(c.nsNames) > maxNamespaces {
			t.Fatalf("step %d (%s): %d namespaces live but %d named, %d slots of which %d free (at most %d were ever live)",
				step, op, live, len(c.slots), len(c.nsNames), len(c.free), maxNamespaces)
		}
	}
}

func countModel(model map[string]string) wire.Pods {
	out := wire.Pods{Total: len(model)}
	ns := map[string]int{}
	for key, phase := range model {
		switch PhaseOf(phase) {
		case PhaseRunning:
			out.Running++
		case PhasePending:
			out.Pending++
		case PhaseSucceeded:
			out.Succeeded++
		case PhaseFailed:
			out.Failed++
		default:
			out.Unknown++
		}
		name, _, _ := strings.Cut(key, "/")
		ns[name]++
	}
	if len(ns) > 0 {
		out.ByNamespace = ns
	}
	return out
}
