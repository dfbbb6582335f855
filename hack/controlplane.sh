#!/usr/bin/env bash
# Builds the kube-apiserver, kube-controller-manager and etcd the integration
# tests run against, from the Go module proxy, once per machine and version.
# Prints the directory that holds them. A warm cache returns at once; a cold one
# takes ~10 minutes on 2 cores (kube-controller-manager shares the apiserver's
# build cache and adds about a minute).
set -euo pipefail

KUBE_VERSION=v1.37.2
ETCD_VERSION=v3.7.3
tools=kube-apiserver
# `hack/controlplane.sh 1.35` builds the compatibility control plane: the
# Kubernetes minor that pilot clusters run, with the same etcd.
if [[ "${1:-}" == "1.35" ]]; then
  KUBE_VERSION=v1.35.8
  tools=kube-apiserver-1.35
elif [[ -n "${1:-}" ]]; then
  echo "usage: hack/controlplane.sh [1.35]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/hack/cache.sh"
dir="$cache/kube-$KUBE_VERSION-etcd-$ETCD_VERSION"

built() { [[ -x "$dir/kube-apiserver" && -x "$dir/kube-controller-manager" && -x "$dir/etcd" ]]; }
reuse_or_lock ".lock-kube-$KUBE_VERSION"

tmp="$(mktemp -d "$cache/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "building kube-apiserver and kube-controller-manager $KUBE_VERSION and etcd $ETCD_VERSION into $dir (once per machine, ~10 min cold)" >&2
mkdir -p "$dir"

pkg=k8s.io/component-base/version
minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
# Each binary is built only if missing, so a cache from before
# kube-controller-manager joined gains it without rebuilding the rest.
for cmd in kube-apiserver kube-controller-manager; do
  [[ -x "$dir/$cmd" ]] && continue
  (cd "$root/test/tools/$tools" &&
    GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/$cmd" "k8s.io/kubernetes/cmd/$cmd")
  mv "$tmp/$cmd" "$dir/"
done
# Both Kubernetes versions run the same etcd, and make test builds them side
# by side: the first to get here builds it once, under its own lock, into a
# directory of its own, and each control plane takes a copy.
if [[ ! -x "$dir/etcd" ]]; then
  etcd="$cache/etcd-$ETCD_VERSION/etcd"
  (
    exec 8>"$cache/.lock-etcd-$ETCD_VERSION"
    flock 8
    if [[ ! -x "$etcd" ]]; then
      (cd "$root/test/tools/etcd" &&
        GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" .)
      mkdir -p "${etcd%/*}"
      mv "$tmp/etcd" "$etcd"
    fi
  )
  cp "$etcd" "$tmp/etcd"
  mv "$tmp/etcd" "$dir/"
fi
echo "$dir"
