# kubehz-agent. Few targets, each doing one obvious thing.

MODULES := shared observer actor test
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X kubehz.dev/agent/shared/buildinfo.Version=$(VERSION)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# The control plane the tests run against; built once per machine.
ASSETS = $(shell hack/controlplane.sh)

.PHONY: build test test-k8s-1.35 bench bench-large demo lint verify controlplane fuzz

## build: static observer and actor binaries into bin/
# Each from its own module with GOWORK=off, as the Dockerfiles build them: in
# workspace mode the test module's requirements could raise a dependency, and
# the binary tested would not be the one that ships.
build:
	mkdir -p bin
	cd observer && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o ../bin/observer .
	cd actor && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o ../bin/actor .

## controlplane: build (or find cached) what the tests run: kube-apiserver,
## kube-controller-manager and etcd, and machine-controller with its webhook
# The two builds run side by side: cold, each spends much of its time
# downloading modules, which the other's compiling overlaps.
controlplane:
	@set -e; hack/machinecontroller.sh >/dev/null & mc=$$!; \
	hack/controlplane.sh >/dev/null; wait $$mc

# The randomized safety test runs on its own so its seed and totals print.
SAFETY := TestSafety_TenThousandRandomScenarios

## test: every test of every module, with the race detector, on a real
## apiserver, and the randomized safety test printing its seed; meanwhile
## the end-to-end suite again on Kubernetes 1.35; a failed run ends with
## what failed, in a few lines (hack/failures.sh)
# The end-to-end suites spend most of their time waiting on clocks (grace
# periods, leases, join timeouts), while the builds and the other tests are
# pure CPU. So the 1.35 control plane and the e2e test binary build beside
# the 1.37 control plane, both suites start (each as two processes, see
# hack/e2e.sh) as soon as what they run on is there, and the modules' tests
# and the safety test fill their waiting.
E2E := kubehz.dev/agent/test/e2e
test:
	@set -e; logs="$$(mktemp -d)"; bin="$$logs/e2e.test"; compat=; build=; e2e=; safety=; \
	trap 'kill $$compat $$build $$e2e $$safety 2>/dev/null || true; wait; rm -rf "$$logs"' EXIT; \
	( hack/controlplane.sh 1.35 >/dev/null; until [ -x "$$bin" ]; do sleep 2; done; \
	  echo "== test/e2e on Kubernetes 1.35"; exec hack/e2e.sh "$$bin" 1.35 ) >"$$logs/e2e-1.35" 2>&1 & compat=$$!; \
	(cd test && go test -race -c -o "$$bin.tmp" ./e2e/ && mv "$$bin.tmp" "$$bin") & build=$$!; \
	$(MAKE) --no-print-directory controlplane; wait $$build; build=; \
	hack/e2e.sh "$$bin" >"$$logs/e2e" 2>&1 & e2e=$$!; \
	export KUBEHZ_TEST_ASSETS="$$(hack/controlplane.sh)"; \
	(cd actor && go test -race -count=1 -timeout 30m -run '^$(SAFETY)$$' -v ./internal/safety) >"$$logs/safety" 2>&1 & safety=$$!; \
	for m in $(MODULES); do \
	  echo "== $$m"; \
	  (cd $$m && go test -race -count=1 -timeout 30m -skip '^$(SAFETY)$$' $$(go list ./... | grep -vx '$(E2E)')); \
	done; \
	echo "== actor: $(SAFETY)"; \
	wait $$safety || { cat "$$logs/safety"; exit 1; }; safety=; \
	grep -E 'seed|totals|^ok' "$$logs/safety"; \
	echo "== test/e2e on Kubernetes 1.37"; \
	status=0; wait $$e2e || status=$$?; e2e=; cat "$$logs/e2e"; \
	wait $$compat || status=$$?; compat=; cat "$$logs/e2e-1.35"; \
	[ $$status = 0 ] || hack/failures.sh "Kubernetes 1.37" "$$logs/e2e" "Kubernetes 1.35" "$$logs/e2e-1.35"; \
	exit $$status

## test-k8s-1.35: the end-to-end suite on kube-apiserver 1.35, what pilot clusters run
test-k8s-1.35:
	@set -e; bin="$$(mktemp -d)/e2e.test"; trap 'rm -rf "$${bin%/*}"' EXIT; \
	(cd test && go test -race -c -o "$$bin" ./e2e/); \
	echo "== test/e2e on Kubernetes 1.35"; hack/e2e.sh "$$bin" 1.35

## bench: every module's Go benchmarks (test/footprint among them: a Lease
## held through tools/leaderelection against one held with kubeapi's own
## types, over the same window), then the scale harness (test/bench):
## the built observer and two actor replicas on a real apiserver at 10/50
## nodes/pods (without, then with the optional CRDs), 100/5,000 and
## 1,000/50,000; prints tables, writes bin/bench/results.json and
## docs/bench-memory.svg. KUBEHZ_BENCH_WINDOW (default 360s) is the steady
## window; KUBEHZ_BENCH_SIZES overrides the sizes (see test/bench);
## KUBEHZ_BENCH_AGENT_ENV adds environment to every binary (for example
## GOMAXPROCS=64, as on a big node);
## KUBEHZ_BENCH_FROM=a.json,b.json prints and charts saved runs together.
KUBEHZ_BENCH_SIZES ?= small
bench: controlplane
	@set -e; export KUBEHZ_TEST_ASSETS="$(ASSETS)"; \
	for m in $(MODULES); do \
	  pkgs="$$(cd $$m && grep -rl --include='*_test.go' '^func Benchmark' . | xargs -r -n1 dirname | sort -u | grep -vx './bench' || true)"; \
	  [ -z "$$pkgs" ] || (cd $$m && go test -run '^$$' -bench . -benchmem -timeout 1h $$pkgs); \
	done; \
	cd test && KUBEHZ_BENCH_SIZES="$(KUBEHZ_BENCH_SIZES)" \
	  go test -count=1 -run '^$$' -bench '^BenchmarkScale$$' -benchtime=1x -timeout 4h ./bench/

## bench-large: bench, plus 5,000 nodes / 150,000 pods (the apiserver restarted after populating)
bench-large:
	@$(MAKE) --no-print-directory bench KUBEHZ_BENCH_SIZES=large

## fuzz: every fuzz target for FUZZTIME each (default 30s); failing inputs land in testdata/fuzz
fuzz:
	@hack/fuzz.sh

## demo: the whole story on a real apiserver with a simulated cluster and
## platform, in a live view: a pool scaled, a dead worker healed, a pool
## upgraded node by node, the actor switched off; ends by itself (or on
## Ctrl-C) and removes everything it started
demo:
	@echo "demo: looking for the cached kube-apiserver, kube-controller-manager, etcd and machine-controller"; \
	echo "demo: (hack/controlplane.sh, hack/machinecontroller.sh). The first run on a machine builds them from"; \
	echo "demo: source once: about 15-20 minutes on 2 cores. Later runs skip this."
	@set -e; $(MAKE) --no-print-directory controlplane; assets="$$(hack/controlplane.sh)"; \
	echo "demo: compiling the demo (a minute or two the first time on a machine)"; \
	mkdir -p bin; go build -o bin/demo ./test/cmd/demo; \
	KUBEHZ_TEST_ASSETS="$$assets" exec bin/demo

# golangci-lint, pinned; built from the Go module proxy once per machine.
GOLANGCI_LINT_VERSION := v2.15.0
TOOLS_CACHE ?= $(HOME)/.cache/kubehz-agent/tools
GOLANGCI_LINT = $(TOOLS_CACHE)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

# lint and the lone builds compile as the images do, without cgo and
# with trimmed paths, so the demo's and the release tests' builds of the
# binaries find every package already compiled, and golangci-lint's build
# and the control planes' share its standard library. With cgo on, a cold
# cache compiled the whole tree a second time: about 460 CPU-seconds.
AS_SHIPPED := CGO_ENABLED=0 GOFLAGS="$(strip $(GOFLAGS) -trimpath)"

## lint: golangci-lint (pinned; the linters in .golangci.yml, go vet's
## analyzers among them) on every module; the first run on a machine builds
## golangci-lint
# One run over the workspace's modules, not one per module: golangci-lint
# type-checks every dependency from source, and client-go's tree, loaded once
# instead of three times, cut its CPU time from about 240 s to 85 s. No
# separate go vet: its govet linter runs the same analyzers, and go vet
# compiled the test module's dependencies for nothing else, about 210
# CPU-seconds of a cold run.
lint:
	@test -x "$(GOLANGCI_LINT)" || { echo "building golangci-lint $(GOLANGCI_LINT_VERSION) into $(TOOLS_CACHE) (once per machine)"; \
	  GOBIN="$(dir $(GOLANGCI_LINT))" GOWORK=off $(AS_SHIPPED) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); }
	@$(AS_SHIPPED) "$(GOLANGCI_LINT)" run $(MODULES:%=./%/...)

## verify: gofmt, lint, tidy go.mod files, each module building alone
verify: lint
	@test -z "$$(gofmt -l $(MODULES))" || { gofmt -l $(MODULES); exit 1; }
	@set -e; for m in $(MODULES); do \
	  (cd $$m && GOWORK=off go mod tidy -diff && GOWORK=off $(AS_SHIPPED) go build ./...); \
	done

.PHONY: help test-unit image release-manifests vulncheck

## help: every target and what it does
help:
	@awk '/^## [A-Za-z0-9_.-]+:/ { sub(/^## /, ""); i = index($$0, ":"); \
	  printf "%-18s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2); more = 1; next } \
	  more && /^## / { printf "%-18s %s\n", "", substr($$0, 4); next } { more = 0 }' $(firstword $(MAKEFILE_LIST))

## test-unit: the tests that need no control plane, with the race detector,
## in about a minute, the modules side by side: leaves out the packages whose
## tests start kube-apiserver, test/release (it cross-builds both binaries)
## and the randomized safety test
test-unit:
	@set -e; out="$$(mktemp -d)"; trap 'rm -rf "$$out"' EXIT; pids=""; \
	for m in $(MODULES); do \
	  ( set -e; cd $$m; dirs="$$(go list -f '{{.Dir}}' ./...)"; pkgs=""; \
	    for d in $$dirs; do \
	      grep -qsE 'Start\((kube\.)?Options' "$$d"/*_test.go && continue; \
	      case "$$d" in */test/release) continue;; esac; pkgs="$$pkgs $$d"; \
	    done; \
	    if [ -n "$$pkgs" ]; then go test -race -count=1 -skip '^$(SAFETY)$$' $$pkgs; fi ) >"$$out/$$m" 2>&1 & \
	  pids="$$pids $$!"; \
	done; \
	status=0; for p in $$pids; do wait $$p || status=1; done; \
	for m in $(MODULES); do cat "$$out/$$m"; done; exit $$status

# Where make image tags the images, and for which platforms it builds them.
IMAGE_REPO ?= ghcr.io/kubehz
PLATFORMS ?= linux/amd64,linux/arm64
SOURCE ?= unknown

## image: both images (Dockerfile.observer, Dockerfile.actor) for PLATFORMS
## with docker buildx, tagged IMAGE_REPO/<name>:VERSION; IMAGE_FLAGS passes
## more flags, e.g. --push, or --load with PLATFORMS=linux/amd64
image:
	@docker buildx version >/dev/null 2>&1 || { \
	  echo "make image needs Docker with the buildx plugin, and 'docker buildx version' failed here;" >&2; \
	  echo "install buildx, or rely on test/release, which checks the Dockerfiles and builds both architectures without Docker" >&2; \
	  exit 1; }
	@set -e; for b in observer actor; do \
	  docker buildx build --platform "$(PLATFORMS)" -f Dockerfile.$$b \
	    --build-arg VERSION="$(VERSION)" --build-arg REVISION="$(REVISION)" --build-arg SOURCE="$(SOURCE)" \
	    -t "$(IMAGE_REPO)/$$b:$(VERSION)" $(IMAGE_FLAGS) . ; \
	done

# Where make release-manifests writes.
RELEASE_DIR ?= bin/release

## release-manifests: install-observer.yaml, install-actor.yaml, install-register.yaml and SHA256SUMS
## into RELEASE_DIR (bin/release), images pinned by digest; needs VERSION=vX.Y.Z,
## OBSERVER_DIGEST=sha256:… and ACTOR_DIGEST=sha256:…, and refuses anything less
release-manifests:
	@go run ./test/cmd/release-manifests -version "$(VERSION)" \
	  -observer-digest "$(OBSERVER_DIGEST)" -actor-digest "$(ACTOR_DIGEST)" -out "$(RELEASE_DIR)"

GOVULNCHECK_VERSION := v1.9.0

## vulncheck: govulncheck on every module (needs the Go vulnerability database online)
vulncheck:
	@set -e; for m in $(MODULES); do echo "== $$m"; \
	  (cd $$m && GOWORK=off go run golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION) ./...); \
	done
