package kube

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(m, mode))
	}
	StopBeforeTimeout()
	goleak.VerifyTestMain(m,
		// client-go keeps idle HTTP/2 connections of a shared transport
		// reading until the process ends; they belong to the test clients.
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"))
}
