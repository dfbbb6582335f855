package store

// The leader's reports leave the actor through one ConfigMap, which the
// observer folds into its beats. The actor never talks to the platform about
// what it did; this ConfigMap is the only channel. Publisher writes it.

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

// readTimeout bounds the read before a write: a hung apiserver must not
// wedge the poller while the elector keeps renewing the lease.
const readTimeout = 15 * time.Second

// Fence hands out a context for one write while this process leads.
type Fence interface {
	Write(ctx context.Context) (context.Context, context.CancelFunc, error)
}

// Publisher writes the ConfigMap with optimistic concurrency: every update
// carries the resourceVersion it read, so two writers can never silently
// overwrite each other.
type Publisher struct {
	Client    kubernetes.Interface
	Namespace string
	ConfigMap string // its name in Namespace
	Identity  string
	Fence     Fence
	Now       func() time.Time
}

// Publish writes the reports of revision rev. An unchanged list costs no write.
func (p *Publisher) Publish(ctx context.Context, rev int64, actions []wire.Action) error {
	data, err := report.Encode(report.Document{Revision: rev, Holder: p.Identity, UpdatedAt: p.Now().UTC().Truncate(time.Second), Actions: actions})
	if err != nil {
		return fmt.Errorf("encode action reports: %w", err)
	}
	cms := p.Client.CoreV1().ConfigMaps(p.Namespace)
	// One retry after a conflict: the only other writer is a previous
	// leader's last write, which the fresh read now includes.
	for attempt := 0; attempt < 2; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		cm, err := cms.Get(rctx, p.ConfigMap, metav1.GetOptions{})
		cancel()
		if apierrors.IsNotFound(err) {
			// deploy/actor ships the ConfigMap; the actor may not create
			// ConfigMaps, so that it can never plant another one (the
			// heartbeat-owner marker among them).
			return fmt.Errorf("ConfigMap %s/%s does not exist: re-apply deploy/actor, which ships it", p.Namespace, p.ConfigMap)
		}
		if err != nil {
			return fmt.Errorf("read ConfigMap %s/%s: %w", p.Namespace, p.ConfigMap, err)
		}
		if sameReports(cm.Data[report.Key], data) {
			return nil
		}
		wctx, cancel, ferr := p.Fence.Write(ctx)
		if ferr != nil {
			return ferr
		}
		cm = cm.DeepCopy()
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[report.Key] = data
		_, err = cms.Update(wctx, cm, metav1.UpdateOptions{FieldManager: "kubehz-agent"})
		cancel()
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("write ConfigMap %s/%s: %w", p.Namespace, p.ConfigMap, err)
		}
	}
	return fmt.Errorf("write ConfigMap %s/%s: conflicting writers", p.Namespace, p.ConfigMap)
}

// sameReports compares what matters, ignoring the timestamp, so a pass that
// changes nothing does not rewrite the ConfigMap.
func sameReports(have, want string) bool {
	a, problemsA := report.Decode(have)
	b, _ := report.Decode(want)
	if len(problemsA) > 0 || a.Revision != b.Revision || a.Holder != b.Holder || len(a.Actions) != len(b.Actions) {
		return false
	}
	for i := range a.Actions {
		if a.Actions[i] != b.Actions[i] {
			return false
		}
	}
	return true
}
