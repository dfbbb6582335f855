//go:build tools

// Package tools pins kube-apiserver's main package so `go mod tidy` keeps it.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
