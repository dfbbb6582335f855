#!/usr/bin/env bash
# Builds kubermatic machine-controller and its admission webhook for the
# tests, from the Go module proxy, once per machine, version and patch, and
# keeps the controller's own CRDs beside them (machine-crds.yaml, taken from
# the module's examples/machine-controller.yaml). Prints the directory. A
# warm cache returns at once; a cold build (empty module and build caches)
# takes about 3.5 minutes alone on 2 cores, more beside the other builds.
#
# The source is the module github.com/kubermatic/machine-controller@v1.65.0,
# checked against the public checksum database and the hash below, with
# test/tools/machine-controller/simcloud.patch applied (read it: three small
# changes, the first of which pins the sdk module's hash).
set -euo pipefail

MC_VERSION=v1.65.0
MC_SUM=h1:np0MVpzFf/35dzsYAqLgd3OiHxZTJ8Um998VSj9Nwrk=
root="$(cd "$(dirname "$0")/.." && pwd)"
patch_file="$root/test/tools/machine-controller/simcloud.patch"
source "$root/hack/cache.sh"
# The patch is part of the build: another patch is another cache entry.
patch_sum="$(sha256sum "$patch_file" | cut -c1-12)"
stamp="machine-controller $MC_VERSION+simcloud.$patch_sum"
dir="$cache/machine-controller-$MC_VERSION-simcloud-$patch_sum"

built() {
  [[ -x "$dir/machine-controller" && -x "$dir/webhook" && -s "$dir/machine-crds.yaml" &&
    "$(cat "$dir/VERSION" 2>/dev/null)" == "$stamp" ]]
}
reuse_or_lock .lock-machine-controller

tmp="$(mktemp -d "$cache/.build.XXXXXX")"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "building $stamp into $dir (once per machine, ~4 min cold)" >&2

# Outside any module, so nothing of ours steers the download.
info="$(cd "$tmp" && GOWORK=off go mod download -json "github.com/kubermatic/machine-controller@$MC_VERSION")"
sum="$(sed -n 's/^\t"Sum": "\(.*\)",$/\1/p' <<<"$info")"
src="$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$info")"
if [[ "$sum" != "$MC_SUM" || -z "$src" ]]; then
  echo "machine-controller $MC_VERSION: module hash $sum, want $MC_SUM" >&2
  exit 1
fi
cp -r "$src" "$tmp/src"
chmod -R u+w "$tmp/src"
patch -s -p1 -d "$tmp/src" <"$patch_file"
mkdir -p "$tmp/bin"
(cd "$tmp/src" &&
  GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$tmp/bin/" ./cmd/machine-controller ./cmd/webhook)

# The YAML documents of kind CustomResourceDefinition, as they are.
awk 'function flush() { if (doc ~ /\nkind: CustomResourceDefinition\n/) printf "---%s", doc; doc = "\n" }
     BEGIN { doc = "\n" } /^---/ { flush(); next } { doc = doc $0 "\n" } END { flush() }' \
  "$tmp/src/examples/machine-controller.yaml" >"$tmp/bin/machine-crds.yaml"
[[ "$(grep -c '^kind: CustomResourceDefinition' "$tmp/bin/machine-crds.yaml")" == 3 ]]

mkdir -p "$dir"
mv "$tmp/bin/machine-controller" "$tmp/bin/webhook" "$tmp/bin/machine-crds.yaml" "$dir/"
echo "$stamp" >"$dir/VERSION"
echo "$dir"
