package actions

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

// BenchmarkReportMerge is the observer's half of the hand-off, per change
// of the actor's ConfigMap or Lease: the informers' transforms decode the
// report (as untrusted input) and the Lease, and Fold decides what rides the
// beat. From one report to the wire's cap of 20, each with a detail at the
// wire's note cap; doc-B is the ConfigMap value the leader wrote.
func BenchmarkReportMerge(b *testing.B) {
	now := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	holder := "actor-7d9f6c8b5-x2k4p_3f2a9c1b"
	renew, duration := metav1.NewMicroTime(now.Add(-5*time.Second)), int32(15)
	lease := &kubeapi.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: report.LeaseName},
		Spec: kubeapi.LeaseSpec{HolderIdentity: &holder, RenewTime: &renew, LeaseDurationSeconds: &duration}}
	for _, n := range []int{1, wire.MaxActions} {
		b.Run(fmt.Sprintf("actions=%d", n), func(b *testing.B) {
			doc := report.Document{Revision: 42, Holder: holder, UpdatedAt: now}
			for i := range n {
				doc.Actions = append(doc.Actions, wire.Action{
					Type: wire.ActionHeal, Target: fmt.Sprintf("workers-%02d-7f9c4d8b6-%05d", i%4, i), Status: wire.StatusDone,
					Detail:   strings.Repeat("node NotReady for 5m; deleted the Machine, its MachineSet recreates it. ", 4)[:wire.MaxNoteLen],
					Revision: 42,
				})
			}
			data, err := report.Encode(doc)
			if err != nil {
				b.Fatal(err)
			}
			cm := &kubeapi.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: report.ConfigMapName},
				Data: map[string]string{report.Key: data}}
			b.ReportAllocs()
			b.ReportMetric(float64(len(data)), "doc-B")
			for b.Loop() {
				rec, err := reportTransform(report.ConfigMapName)(cm)
				if err != nil {
					b.Fatal(err)
				}
				l, err := leaseTransform(lease)
				if err != nil {
					b.Fatal(err)
				}
				if got := Fold(rec.(*reportRecord).doc, &l.(*leaseRecord).lease, now); len(got) != n {
					b.Fatalf("folded %d actions, want %d", len(got), n)
				}
			}
		})
	}
}
