// Package footprint measures what linking client-go's tools/leaderelection
// costs a binary. Two fixtures hold a Lease on a real apiserver, each under
// its own ServiceAccount: withlibrary through that package, set up as the
// actor sets it up, and withtypes through kubeapi's own Lease type, as the
// observer reads its kinds. The benchmark compares their resident memory
// over the same steady window. The package holds a benchmark only: `go test`
// without -bench starts nothing; `make bench` runs it. Run by hand, it
// needs -timeout above the window plus a minute or two (the default 10
// minutes covers the default 360 s window).
package footprint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/kube"
)

const namespace = "footprint"

// fixture is one Lease holder: its name is its package, its Lease's and its
// identity's.
type fixture struct {
	name   string
	bin    string
	binary int64
	proc   *kube.Process
	rss    []int64
}

func BenchmarkLeaseHolderFootprint(b *testing.B) {
	win, err := kube.Window()
	if err != nil {
		b.Fatal(err)
	}
	env, err := kube.Start(kube.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := env.Stop(); err != nil {
			b.Error(err)
		}
	})
	dir := b.TempDir()
	fixtures := []*fixture{{name: "withlibrary"}, {name: "withtypes"}}
	for _, f := range fixtures {
		f.bin = filepath.Join(dir, f.name)
		if err := kube.Build(env.Root, "./test/footprint/"+f.name, f.bin, false); err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(f.bin)
		if err != nil {
			b.Fatal(err)
		}
		f.binary = st.Size()
	}
	// Starting and the checks after the window each get a minute; the
	// window itself is only sampled.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, f := range fixtures {
		kubeconfig, err := leaseHolder(ctx, env, f.name, dir)
		if err != nil {
			b.Fatal(err)
		}
		f.proc, err = kube.StartProcess(f.bin, []string{"KUBECONFIG=" + kubeconfig,
			"FOOTPRINT_NAMESPACE=" + namespace, "FOOTPRINT_LEASE=" + f.name})
		if err != nil {
			b.Fatal(err)
		}
		defer f.proc.Kill()
	}
	for _, f := range fixtures {
		if err := waitHolder(ctx, env, f.name, f.name); err != nil {
			b.Fatalf("%s: %v\n%s", f.name, err, f.proc.Output())
		}
	}

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for end := time.Now().Add(win); time.Now().Before(end); <-tick.C {
		for _, f := range fixtures {
			rss, err := f.proc.RSS()
			if err != nil {
				b.Fatalf("%s: %v\n%s", f.name, err, f.proc.Output())
			}
			f.rss = append(f.rss, rss)
		}
	}
	// Both must still be renewing their Lease at the end, and release it
	// on SIGTERM: a fixture that stopped working would weigh less for it.
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, f := range fixtures {
		if err := renewing(ctx, env, f.name); err != nil {
			b.Fatalf("%s at the end of the window: %v\n%s", f.name, err, f.proc.Output())
		}
		if code, err := f.proc.Stop(10 * time.Second); err != nil || code != 0 {
			b.Fatalf("%s stopped with %d, %v\n%s", f.name, code, err, f.proc.Output())
		}
		if err := waitHolder(ctx, env, f.name, ""); err != nil {
			b.Fatalf("%s after SIGTERM: %v", f.name, err)
		}
	}

	lib, own := fixtures[0], fixtures[1]
	libMed, ownMed := kube.Median(lib.rss), kube.Median(own.rss)
	b.ReportMetric(kube.MiB(libMed), "library-rss-MiB")
	b.ReportMetric(kube.MiB(ownMed), "own-types-rss-MiB")
	b.ReportMetric(float64(lib.binary)/1e6, "library-binary-MB")
	b.ReportMetric(float64(own.binary)/1e6, "own-types-binary-MB")
	fmt.Printf("\nA process that only holds a Lease, over a %s window (RSS median / max, MiB; binary MB):\n"+
		"  tools/leaderelection   %5.1f / %5.1f   %5.1f\n"+
		"  kubeapi's own types    %5.1f / %5.1f   %5.1f\n"+
		"  the library costs %.1f MiB of resident memory (%.2fx)\n\n",
		win, kube.MiB(libMed), kube.MiB(slices.Max(lib.rss)), float64(lib.binary)/1e6,
		kube.MiB(ownMed), kube.MiB(slices.Max(own.rss)), float64(own.binary)/1e6,
		kube.MiB(libMed-ownMed), float64(libMed)/float64(ownMed))
}

// leaseHolder creates the namespace (once), a ServiceAccount called name
// that may hold the Lease called name and nothing else, and a kubeconfig
// for it in dir.
func leaseHolder(ctx context.Context, env *kube.Env, name, dir string) (string, error) {
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	meta := metav1.ObjectMeta{Namespace: namespace, Name: name}
	if _, err := c.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	// create cannot be limited by name; the Lease does not exist yet.
	role := &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{name}, Verbs: []string{"get", "update"}},
	}}
	if _, err := c.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: meta,
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: name}}}
	if _, err := c.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	return path, env.ServiceAccountKubeconfig(ctx, namespace, name, path)
}

// renewing checks that the Lease called name is held by name and was
// renewed within the last 15 s, its lease duration.
func renewing(ctx context.Context, env *kube.Env, name string) error {
	lease, err := env.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	spec := lease.Spec
	if spec.HolderIdentity == nil || *spec.HolderIdentity != name {
		return fmt.Errorf("the Lease's holder is %v, want %q", spec.HolderIdentity, name)
	}
	if spec.RenewTime == nil || time.Since(spec.RenewTime.Time) > 15*time.Second {
		return fmt.Errorf("the Lease was last renewed at %v, over 15 s ago", spec.RenewTime)
	}
	return nil
}

// waitHolder waits until the Lease called name names holder ("" for
// released), for at most 30 s.
func waitHolder(ctx context.Context, env *kube.Env, name, holder string) error {
	var got string
	var err error
	for range 60 {
		var lease *coordinationv1.Lease
		if lease, err = env.Client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			got = ""
			if h := lease.Spec.HolderIdentity; h != nil {
				got = *h
			}
			if got == holder {
				return nil
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("reading the Lease for 30 s: %w", err)
	}
	return fmt.Errorf("the Lease's holder is %q after 30 s, want %q", got, holder)
}
