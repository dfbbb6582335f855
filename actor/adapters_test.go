package main

import (
	"context"
	"log/slog"
	"testing"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"kubehz.dev/agent/actor/internal/execute"
)

// openFence lets every write through, as a fence of a live term does.
type openFence struct{}

func (openFence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(ctx)
	return ctx, cancel, nil
}

var _ execute.Fence = openFence{}

// TestEventRecorder_WritesReasonAndMessageWithoutARuneATerminalWouldObey:
// whatever text reaches the recorder, the Event `kubectl describe` prints
// holds no control, C1 or bidi rune, and shows the text escaped.
func TestEventRecorder_WritesReasonAndMessageWithoutARuneATerminalWouldObey(t *testing.T) {
	const hostile = "v1.35.6\x1b]0;owned\a\u009b2J\u202Eevil\r\n"
	client := fake.NewClientset()
	r := &eventRecorder{client: client, fence: openFence{}, identity: "actor-a", log: slog.New(slog.DiscardHandler)}
	r.Event(t.Context(), execute.Object{Kind: "MachineDeployment", Namespace: "kube-system", Name: "pool-a"}, true,
		"KubehzRefused"+hostile, "target "+hostile)

	list, err := client.CoreV1().Events("kube-system").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("%d Events (err %v), want 1", len(list.Items), err)
	}
	ev := list.Items[0]
	const escaped = `v1.35.6\x1b]0;owned\a\u009b2J\u202eevil\r\n`
	if ev.Reason != "KubehzRefused"+escaped || ev.Message != "target "+escaped {
		t.Errorf("Event reason %q message %q, want the text escaped", ev.Reason, ev.Message)
	}
	for _, r := range ev.Reason + ev.Message {
		if !unicode.IsPrint(r) {
			t.Fatalf("the Event holds %U", r)
		}
	}
}
