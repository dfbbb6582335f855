package lead

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
)

// The KillSwitch tests run inside a synctest bubble too: synctest.Wait returns
// once the informer has handled everything sent so far, so "stays open" is
// checked without sleeping.

func deployment(namespace string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: testDeployment}}
}

// startKillSwitch runs a KillSwitch, inside a synctest bubble, until the test
// ends, and returns it once its first list has been handled and its watch is
// open.
func startKillSwitch(t *testing.T, client *fake.Clientset) *KillSwitch {
	t.Helper()
	g := NewKillSwitch(client, testNamespace, testDeployment, KillSwitchOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	synced := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		g.Run(ctx, synced)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	receive(t, synced, 10*time.Second, "the first sync")
	// The first sync does not wait for the informer's Watch, and the fake
	// never replays a delete made before it opens: return once every
	// goroutine of the bubble is blocked, the reflector in its Watch.
	synctest.Wait()
	return g
}

func TestKillSwitch_TripsWhenTheDeploymentIsGoneOrGoing(t *testing.T) {
	deployments := func(c *fake.Clientset) appsv1client.DeploymentInterface { return c.AppsV1().Deployments(testNamespace) }
	cases := []struct {
		name          string
		existing      []runtime.Object
		wantAtSync    bool // Tripped closed by the time the first sync is reported
		change        func(ctx context.Context, c *fake.Clientset) error
		wantAfterward bool
	}{
		{
			name:       "missing at the first sync trips",
			wantAtSync: true, wantAfterward: true,
		},
		{
			name:       "present only in another namespace trips",
			existing:   []runtime.Object{deployment("elsewhere")},
			wantAtSync: true, wantAfterward: true,
		},
		{
			name:     "present stays open",
			existing: []runtime.Object{deployment(testNamespace)},
		},
		{
			// The watch asks the apiserver for the one name; a lister that
			// served every Deployment (the fake does) must still count only it.
			name:       "only another Deployment of the namespace trips",
			existing:   []runtime.Object{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "observer"}}},
			wantAtSync: true, wantAfterward: true,
		},
		{
			name:       "marked for deletion at the first sync trips",
			existing:   []runtime.Object{markedForDeletion(deployment(testNamespace))},
			wantAtSync: true, wantAfterward: true,
		},
		{
			name:     "an update that does not delete stays open",
			existing: []runtime.Object{deployment(testNamespace)},
			change: func(ctx context.Context, c *fake.Clientset) error {
				d := deployment(testNamespace)
				d.Labels = map[string]string{"rolled": "yes"}
				_, err := deployments(c).Update(ctx, d, metav1.UpdateOptions{})
				return err
			},
		},
		{
			name:     "marked for deletion later trips",
			existing: []runtime.Object{deployment(testNamespace)},
			change: func(ctx context.Context, c *fake.Clientset) error {
				_, err := deployments(c).Update(ctx, markedForDeletion(deployment(testNamespace)), metav1.UpdateOptions{})
				return err
			},
			wantAfterward: true,
		},
		{
			name:     "deleted later trips",
			existing: []runtime.Object{deployment(testNamespace)},
			change: func(ctx context.Context, c *fake.Clientset) error {
				return deployments(c).Delete(ctx, testDeployment, metav1.DeleteOptions{})
			},
			wantAfterward: true,
		},
		{
			name: "created after a killed first sync stays killed",
			change: func(ctx context.Context, c *fake.Clientset) error {
				_, err := deployments(c).Create(ctx, deployment(testNamespace), metav1.CreateOptions{})
				return err
			},
			wantAtSync: true, wantAfterward: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client := fake.NewClientset(tc.existing...)
				g := startKillSwitch(t, client)
				if got := closed(g.Tripped()); got != tc.wantAtSync {
					t.Fatalf("killed at the first sync = %t, want %t", got, tc.wantAtSync)
				}
				if tc.change != nil {
					if err := tc.change(t.Context(), client); err != nil {
						t.Fatalf("change the Deployment: %v", err)
					}
				}
				synctest.Wait()
				if got := closed(g.Tripped()); got != tc.wantAfterward {
					t.Errorf("killed afterwards = %t, want %t", got, tc.wantAfterward)
				}
			})
		})
	}
}

// A second close would panic inside the informer's handler and take the
// test binary down; every step below asks the KillSwitch to trip again.
func TestKillSwitch_TripsOnlyOnceAcrossRepeatedDeletions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(deployment(testNamespace))
		deployments := client.AppsV1().Deployments(testNamespace)
		ctx := t.Context()
		g := startKillSwitch(t, client)

		if _, err := deployments.Update(ctx, markedForDeletion(deployment(testNamespace)), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !closed(g.Tripped()) {
			t.Fatalf("not killed after the Deployment was marked for deletion")
		}
		steps := []func() error{
			func() error { return deployments.Delete(ctx, testDeployment, metav1.DeleteOptions{}) },
			func() error {
				_, err := deployments.Create(ctx, deployment(testNamespace), metav1.CreateOptions{})
				return err
			},
			func() error { return deployments.Delete(ctx, testDeployment, metav1.DeleteOptions{}) },
		}
		for i, step := range steps {
			if err := step(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			synctest.Wait()
			if !closed(g.Tripped()) {
				t.Fatalf("step %d tripped the switch again", i)
			}
		}
	})
}

func markedForDeletion(d *appsv1.Deployment) *appsv1.Deployment {
	now := metav1.NewTime(time.Now())
	d.DeletionTimestamp = &now
	d.Finalizers = []string{"kubehz.dev/test"}
	return d
}
