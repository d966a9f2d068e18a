# Member-cluster kit (test/kit): the binaries it runs, and kit-up for manual use.
# Included by the main Makefile; also usable alone: make -f mk/kit.mk kit-bins
#
#   kit-bins  build etcd, kube-apiserver, kube-controller-manager, kube-scheduler
#             and kwok into $(KIT_BIN): one binary, kitbin, and a symlink
#             per name. File targets: a warm run does nothing; changing
#             test/kitbin (its go.mod pins the versions, kwok's included) or
#             this file rebuilds it.
#             A cold build takes several minutes on 2 cores; Go's build cache
#             makes later ones fast.
#   kit-up    start $(KIT_CLUSTERS) member clusters, print their kubeconfigs,
#             stay up until Ctrl-C, then tear everything down.

# The repository root, from this file's location, so that the fragment works
# whichever directory make runs in (it equals $(CURDIR) for a make at the root).
KIT_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)

KIT_BIN      ?= $(KIT_ROOT)/test/.cache/bin
KIT_CLUSTERS ?= 3
KIT_NODES    ?= 1

KITBIN_DIR  := $(KIT_ROOT)/test/kitbin
# This file is a prerequisite too: its build flags are part of the binaries.
KITBIN_DEPS := $(KITBIN_DIR)/go.mod $(KITBIN_DIR)/go.sum $(KIT_ROOT)/mk/kit.mk

# The Kubernetes version pinned in test/kitbin/go.mod, stamped into the
# binaries so that /version reports it (a plain go build says v0.0.0-master).
KIT_KUBE_VERSION := $(shell awk '$$1 == "k8s.io/kubernetes" { print $$2; exit }' $(KITBIN_DIR)/go.mod)
KIT_KUBE_MAJOR   := $(word 1,$(subst ., ,$(patsubst v%,%,$(KIT_KUBE_VERSION))))
KIT_KUBE_MINOR   := $(word 2,$(subst ., ,$(patsubst v%,%,$(KIT_KUBE_VERSION))))
KIT_KUBE_X        = -X k8s.io/component-base/version.$(1)=$(2) -X k8s.io/client-go/pkg/version.$(1)=$(2)
KIT_KUBE_LDFLAGS := -s -w \
	$(call KIT_KUBE_X,gitVersion,$(KIT_KUBE_VERSION)) \
	$(call KIT_KUBE_X,gitMajor,$(KIT_KUBE_MAJOR)) \
	$(call KIT_KUBE_X,gitMinor,$(KIT_KUBE_MINOR)) \
	$(call KIT_KUBE_X,gitTreeState,clean)

# The kit's binaries are one multi-call executable, kitbin (test/kitbin: one
# compile of the Kubernetes libraries, one link), and a symlink per name;
# kitbin runs the component its name says. CGO_ENABLED=0 and -trimpath are
# the flags of every other build here (Makefile, deploy/images), so that they
# share the standard library's compiled packages in Go's build cache.
KIT_GO := CGO_ENABLED=0 GOFLAGS=-trimpath go

KIT_NAMES    := etcd kube-apiserver kube-controller-manager kube-scheduler kwok
KIT_BINARIES := $(addprefix $(KIT_BIN)/,$(KIT_NAMES))

.PHONY: kit-bins kit-up kubectl

kit-bins: $(KIT_BINARIES) $(KIT_BIN)/kubectl

# kubectl, stock, at the kit's Kubernetes version (test/kubectlbin, its own
# module: k8s.io/kubectl needs no replace directives), for the tests that
# run unmodified kubectl through the hub's member proxy.
KUBECTLBIN_DIR := $(KIT_ROOT)/test/kubectlbin
kubectl: $(KIT_BIN)/kubectl

$(KIT_BIN)/kubectl: $(KUBECTLBIN_DIR)/go.mod $(KUBECTLBIN_DIR)/go.sum $(KUBECTLBIN_DIR)/main.go $(KIT_ROOT)/mk/kit.mk
	@mkdir -p $(@D)
	@echo ">> building kubectl ($(KIT_KUBE_VERSION)) into $@"
	cd $(KUBECTLBIN_DIR) && $(KIT_GO) build -ldflags='$(KIT_KUBE_LDFLAGS)' -o $@ .
	@touch $@

# go build leaves an up-to-date binary untouched, so the recipe touches its
# target: otherwise make would see it older than go.mod and rebuild forever.
$(KIT_BIN)/kitbin: $(KITBIN_DEPS) $(wildcard $(KITBIN_DIR)/*.go)
	@mkdir -p $(@D)
	@echo ">> building the member-cluster kit: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok"
	@echo "   as one binary, $@ ($(KIT_KUBE_VERSION); a few minutes on a cold Go cache)"
	cd $(KITBIN_DIR) && $(KIT_GO) build -ldflags='$(KIT_KUBE_LDFLAGS)' -o $@ .
	@touch $@

# make compares a symlink's target's time, so a link is as new as kitbin.
$(KIT_BINARIES): $(KIT_BIN)/kitbin
	@ln -sfn kitbin $@

# kitup is built from the main module each time (cheap, cached), then exec'd
# directly rather than through go run, so that Ctrl-C reaches it alone.
kit-up: kit-bins
	cd $(KIT_ROOT) && go build -o $(KIT_BIN)/kitup ./test/kit/cmd/kitup
	TETHER_KIT_BIN=$(KIT_BIN) $(KIT_BIN)/kitup -n $(KIT_CLUSTERS) -nodes $(KIT_NODES)
