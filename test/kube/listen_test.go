package kube

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestListening_SeesAListenerAndNotADialer: the e2e no-listener check must be
// able to fail, so it is shown here to find a real listening socket.
func TestListening_SeesAListenerAndNotADialer(t *testing.T) {
	before, err := Listening(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	after, err := Listening(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 || !strings.HasPrefix(after[len(after)-1], "tcp ") {
		t.Fatalf("listening sockets %v → %v; the new listener was not seen", before, after)
	}
}
