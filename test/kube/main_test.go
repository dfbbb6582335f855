package kube

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(interruptedChildEnv) != "" {
		interruptedChild()
		return
	}
	goleak.VerifyTestMain(m,
		// client-go keeps idle HTTP/2 connections of a shared transport
		// reading until the process ends; they belong to the test clients.
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"))
}
