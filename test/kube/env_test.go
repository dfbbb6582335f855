package kube

import (
	"context"
	"testing"
	"time"
)

func TestStart_ReportsPinnedVersion(t *testing.T) {
	env, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = ctx
	v, err := env.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.37.2" {
		t.Fatalf("apiserver reports %q, want v1.37.2 (ldflags stamp)", v.GitVersion)
	}
}
