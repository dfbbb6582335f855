package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/wire"
)

// Apply writes the platform's availableUpdates verdict to the CR's status.
// It blocks for up to 15 s, so callers keep it off the beat's send path.
//
// No verdict touches nothing. A verdict whose entries are all invalid is not
// a clear: only an explicit empty list clears. A verdict equal to what the
// status already records costs no patch, except on a CR that has never been
// written, where the first verdict always lands so lastReported is stamped.
func (m *Manager) Apply(ctx context.Context, v platform.Verdict) {
	if !v.Present {
		return
	}
	capped := capUpdates(v.Updates)
	if len(v.Updates) > 0 && len(capped) == 0 {
		m.log.Debug("Ignoring an availableUpdates verdict with no valid entry", "entries", len(v.Updates))
		return
	}

	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	m.mu.Lock()
	present, upToDate := m.present, m.recorded && slices.Equal(m.baseline, capped)
	m.mu.Unlock()
	if !present {
		m.log.Debug("No ClusterInventory to write availableUpdates to", "name", Name)
		return
	}
	if upToDate {
		return
	}

	body, err := statusPatch(capped, m.clk.Now())
	if err != nil {
		m.log.Error("Cannot encode the ClusterInventory status patch", "err", err) // unreachable for these types
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	_, err = m.client.Patch(callCtx, Name, types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: FieldManager}, "status")
	cancel()
	m.settle(ctx, capped, err)
}

// settle records the outcome of a status patch. The caller holds applyMu.
func (m *Manager) settle(ctx context.Context, capped []wire.AvailableUpdate, err error) {
	switch {
	case err == nil:
		m.lastPatchErr = ""
		m.mu.Lock()
		m.epoch++
		m.baseline, m.recorded = capped, true
		m.mu.Unlock()
		m.log.Info("Wrote availableUpdates to the ClusterInventory status", "name", Name, "updates", len(capped))
	case apierrors.IsNotFound(err):
		m.notFound(ctx, err)
	case apierrors.IsForbidden(err):
		// Stays forbidden until someone fixes the RBAC; once is enough.
		if !m.warnedForbidden {
			m.warnedForbidden = true
			m.log.Warn("Not allowed to patch clusterinventories/status; availableUpdates stays unwritten", "name", Name, "err", err,
				"check", "the observer's RBAC from deploy/observer: kubectl auth can-i patch clusterinventories/cluster --subresource=status --as=system:serviceaccount:kubehz-system:kubehz-observer")
		}
	case ctx.Err() != nil:
		// Shutting down; the next process writes the next verdict.
	case err.Error() != m.lastPatchErr:
		m.lastPatchErr = err.Error()
		m.log.Warn("Cannot write availableUpdates to the ClusterInventory status; a later beat retries", "name", Name, "err", err)
	}
}

// notFound settles a status patch answered NotFound. A CRD without the
// status subresource answers every status patch with the same NotFound,
// naming the CR, as a deleted CR gets; only the CR's own read tells them
// apart. Forgetting a CR that is there would take the inventory off the
// beat until the next read, every verdict. The caller holds applyMu.
func (m *Manager) notFound(ctx context.Context, patchErr error) {
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := m.client.Get(callCtx, Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// Deleted since the last read: drop the mirror now, the poll resyncs.
		m.mu.Lock()
		m.epoch++
		changed := m.snapshot != nil
		m.snapshot, m.present, m.recorded, m.baseline = nil, false, false, nil
		m.mu.Unlock()
		if changed {
			m.notify()
		}
	case err == nil:
		if !m.warnedNoStatus {
			m.warnedNoStatus = true
			m.log.Warn("The ClusterInventory CRD serves no status subresource; availableUpdates stays unwritten", "name", Name, "err", patchErr)
		}
	case ctx.Err() != nil:
	case err.Error() != m.lastPatchErr:
		// Neither told apart nor forgotten: the next verdict asks again. Said
		// once per distinct failure, as any other failed write is.
		m.lastPatchErr = err.Error()
		m.log.Warn("A status patch found no ClusterInventory and the read that would say why failed; a later beat retries",
			"name", Name, "err", patchErr, "readErr", err)
	}
}

// statusPatch is the merge patch body: exactly the two keys the agent owns,
// so spec and status.observedAddons are never touched. The list is never
// null, because null in a merge patch deletes the key and would bring back
// "never checked".
func statusPatch(updates []wire.AvailableUpdate, now time.Time) ([]byte, error) {
	if updates == nil {
		updates = []wire.AvailableUpdate{}
	}
	type status struct {
		AvailableUpdates []wire.AvailableUpdate `json:"availableUpdates"`
		LastReported     string                 `json:"lastReported"`
	}
	body, err := json.Marshal(struct {
		Status status `json:"status"`
	}{status{updates, now.UTC().Truncate(time.Second).Format(time.RFC3339)}})
	if err != nil {
		return nil, fmt.Errorf("encode status patch: %w", err)
	}
	return body, nil
}
