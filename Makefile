# Tether's build. A newcomer needs two targets: `make demo` and `make test`.
# Everything a target needs (Go tools, Kubernetes binaries for the member-cluster
# kit) is installed by the targets themselves into gitignored caches.

SHELL       := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
GO          ?= go
MODULE      := github.com/tetherproj/tether
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
COMMIT      ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS     := -X $(MODULE)/internal/version.Version=$(VERSION) -X $(MODULE)/internal/version.Commit=$(COMMIT)
BIN         := $(CURDIR)/bin
TOOLS_BIN   ?= $(CURDIR)/.cache/tools
KIT_BIN     ?= $(CURDIR)/test/.cache/bin
# go test's whole-run limit; CI's own limit is 90 minutes.
TEST_TIMEOUT ?= 45m
CMDS        := $(notdir $(wildcard cmd/*))

export TETHER_KIT_BIN := $(KIT_BIN)

# Every go command make runs builds without cgo (nothing here needs it), like
# the images (deploy/images) and the kit's binaries (mk/kit.mk): cgo on or off
# changes every compiled package, so one setting lets `make build`, `make demo`,
# `make images` and the kit share Go's build cache.
CGO_ENABLED ?= 0
export CGO_ENABLED

.PHONY: all build test test-long test-unit lint vet fmt-check generate check-generated tools clean help
all: build

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: ## build every binary of cmd/ into bin/, version-stamped
	@mkdir -p $(BIN)
	@echo ">> building $(CMDS) ($(VERSION))"
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ $(addprefix ./cmd/,$(CMDS))

# make test runs every package's tests but the long ones, which take
# minutes waiting out a duration or loading thousands of objects: the long
# tests of test/tier (make test-long), the fault suite's scenarios beyond
# its smoke tier (make faults) and the HA suite's (make ha). CI (.ci/run)
# runs those targets after make test.
#
# Most packages start processes (etcd, kube-apiservers, hubs, agents) and
# spend their time waiting for them, so go test runs TEST_PARALLEL
# packages at once on two cores; the fault suite's smoke tier, which waits
# longest, runs beside them and its output follows theirs. The packages
# run `make build`'s binaries (TETHER_BIN) instead of each linking its own,
# and go test's own vet pass is off: lint's go vet has checked every
# package, its tests included.
FAULTS_PKG    := ./test/faults/
TEST_PARALLEL ?= 4
# TEST_FLAGS go to every go test of make test, e.g. -json to rank packages
# and tests by time.
TEST_FLAGS    ?=
# go test starts packages in the order it is given them: the slowest first
# (most wait for processes they start), so that no long one starts last.
TEST_FIRST    := test/e2e test/integration test/security hub test/memberproxy test/kit hub/clientapi test/bench test/load hub/store
# The images test (deploy/images) builds with `make build`'s flags, so after it
# only links: seconds. Outside make it is left out (see its file).
TEST_TAGS := imagestest

test: kit-bins build ## lint, generated code up to date, every test but the long ones (see test-long, faults, ha)
	@$(MAKE) --no-print-directory lint check-generated
	@echo ">> go test (timeout $(TEST_TIMEOUT), $(TEST_PARALLEL) packages at once), $(FAULTS_PKG) beside the rest"
	@mkdir -p .cache
	@export TETHER_BIN=$(BIN); \
	( $(GO) test $(TEST_FLAGS) -vet=off -count=1 -timeout $(TEST_TIMEOUT) $(FAULTS_PKG) > .cache/faults-test.log 2>&1; echo $$? > .cache/faults-test.rc ) & \
	rest=0; $(GO) test $(TEST_FLAGS) -vet=off -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) -tags $(TEST_TAGS) \
		$$( ( printf '$(MODULE)/%s\n' $(TEST_FIRST); $(GO) list ./... ) | awk '!seen[$$0]++' | grep -v '/test/faults$$') || rest=$$?; \
	wait; cat .cache/faults-test.log; faults=$$(cat .cache/faults-test.rc); \
	if [ "$$rest" != 0 ] || [ "$$faults" != 0 ]; then echo ">> go test failed (others: $$rest, faults: $$faults)"; exit 1; fi
	@echo ">> not in make test, run by CI after it: make test-long, make faults, make ha"

# The packages holding a long test (one that calls test/tier's Long):
# make test-long runs them whole with TETHER_TESTS=long, so their other
# tests run a second time.
LONG_MARK := tier\.Long[(]
LONG_PKGS  = $(sort $(dir $(shell git ls-files '*_test.go' | xargs grep -l '$(LONG_MARK)')))

test-long: kit-bins build ## the long tests make test leaves out (test/tier), with their packages
	TETHER_TESTS=long TETHER_BIN=$(BIN) $(GO) test -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) $(addprefix ./,$(LONG_PKGS))

test-unit: ## the tests that start no process (fast loop while coding)
	$(GO) test -short ./api/... ./internal/...

lint: fmt-check vet lint-proto breaking-proto ## gofmt, go vet, buf lint, buf breaking against the previous release

fmt-check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt'ed: $$unformatted"; exit 1; fi

vet:
	$(GO) vet ./...

generate: generate-proto ## regenerate committed generated code

check-generated: generate ## fail if generated code differs from what is committed
	@git diff --exit-code -- api/gen || { echo "generated code is stale: run make generate and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api/gen)" || { git status --porcelain -- api/gen; echo "untracked generated files: run make generate and commit"; exit 1; }

tools: tools-proto kit-bins ## install every pinned tool and binary

clean: ## remove build outputs (not the caches)
	rm -rf $(BIN)

include $(wildcard mk/*.mk)
