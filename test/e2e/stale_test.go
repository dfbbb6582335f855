package e2e

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/clustersim"
)

// TestActor_StaleReadPatchIsRefused sends, as the actor's ServiceAccount, the
// exact patch shape the actor sends (a merge patch carrying the
// resourceVersion its decision was made on) after the MachineDeployment has
// changed: the real apiserver must refuse it with 409 rather than apply it.
// That the executor then re-decides instead of retrying blindly is pinned by
// the actor's unit tests.
func TestActor_StaleReadPatchIsRefused(t *testing.T) {
	world, mds := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-s", 1, clustersim.PoolOptions{}); err != nil {
		t.Fatal(err)
	}
	read, err := mds.Get(ctxT(t), "pool-s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Someone else changes the MD after the actor read it.
	if _, err := mds.Patch(ctxT(t), "pool-s", types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := suite.env.ServiceAccountConfig(ctxT(t), "kubehz-system", "kubehz-actor")
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"replicas":2}}`, read.GetResourceVersion())
	_, err = dyn.Resource(mdsGVR).Namespace("kube-system").Patch(ctxT(t), "pool-s", types.MergePatchType, []byte(body),
		metav1.PatchOptions{FieldManager: "kubehz-agent"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("a patch decided on a stale read got %v, want 409 Conflict", err)
	}
	if n := replicasOf(t, mds, "pool-s"); n != 1 {
		t.Fatalf("the stale patch was applied: replicas %d", n)
	}
	// The same patch with the current resourceVersion is accepted.
	cur, err := mds.Get(ctxT(t), "pool-s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body = fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"replicas":2}}`, cur.GetResourceVersion())
	if _, err := dyn.Resource(mdsGVR).Namespace("kube-system").Patch(ctxT(t), "pool-s", types.MergePatchType, []byte(body),
		metav1.PatchOptions{FieldManager: "kubehz-agent"}); err != nil {
		t.Fatalf("a fresh patch was refused: %v", err)
	}
}
