//go:build tools

// Package tools pins the main packages of kube-apiserver and kube-controller-manager so `go mod tidy` keeps it.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
