# mk/charts.mk: the Helm charts (deploy/charts) and the OCI images (deploy/images).
#
# Included by the main Makefile, which defines TOOLS_BIN before the include;
# also usable alone from the repository root:
#
#   make -f mk/charts.mk tools-charts lint-charts images
#
# Targets:
#   tools-charts  install the pinned helm into $(TOOLS_BIN) (skipped when there)
#   lint-charts   helm lint of both charts (the agent's with its required values)
#   charts-test   lint, the Go test that renders the charts with helm and
#                 applies them to a kit cluster (deploy/chartstest, also part
#                 of `make test`, which gets helm through tools-charts), and
#                 the images test (deploy/images, -tags imagestest: it builds
#                 with `make build`'s flags, CGO_ENABLED=0 -trimpath, so after
#                 `make build` it only links; `make test` runs it too)
#   images        the hub and agent images as OCI layout tar files in
#                 $(IMAGES_OUT), reproducible from one commit (deploy/images)
#
# helm is installed like buf in mk/proto.mk: `go install` into its own
# versioned directory, $(TOOLS_BIN)/.versions/helm@VERSION/helm (the file
# target), and $(TOOLS_BIN)/helm is a symlink to it.

TOOLS_BIN ?= $(CURDIR)/.cache/tools
GO        ?= go

CHARTS_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)

# helm v3.22.0: the newest v3 the Go module proxy serves that builds with the
# Go toolchain here (it needs no newer Go than go.mod's).
HELM_VERSION := v3.22.0

CHARTS_TOOLS_BIN := $(abspath $(TOOLS_BIN))
HELM             := $(CHARTS_TOOLS_BIN)/.versions/helm@$(HELM_VERSION)/helm
CHARTS           := $(CHARTS_ROOT)/deploy/charts/tether-hub $(CHARTS_ROOT)/deploy/charts/tether-agent

# The agent chart refuses to render without its four required values; lint
# gives it placeholders of the right form.
CHARTS_AGENT_LINT_VALUES := --set cluster=lint,hub=hub.example.com:7443,bootstrapToken.value=lint.token \
	--set caHash=sha256:0000000000000000000000000000000000000000000000000000000000000000

# Where `make images` writes NAME.oci.tar, and the timestamp inside them: the
# last commit's time, so that one commit gives one digest.
IMAGES_OUT          ?= $(CHARTS_ROOT)/bin/images
SOURCE_DATE_EPOCH   ?= $(shell git -C $(CHARTS_ROOT) log -1 --format=%ct 2>/dev/null || echo 0)
IMAGES_VERSION      ?= $(shell git -C $(CHARTS_ROOT) describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
IMAGES_COMMIT       ?= $(shell git -C $(CHARTS_ROOT) rev-parse --short HEAD 2>/dev/null || echo unknown)

$(HELM):
	@mkdir -p $(dir $@)
	@echo "install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)"
	@tmp=$$(mktemp -d "$(dir $@).tmp.XXXXXX") && \
		GOBIN="$$tmp" $(GO) install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION) && \
		mv "$$tmp/helm" $@ && rmdir "$$tmp" || { rm -rf "$$tmp"; exit 1; }

.PHONY: tools-charts
tools-charts: $(HELM)
	@ln -sfn ".versions/helm@$(HELM_VERSION)/helm" "$(CHARTS_TOOLS_BIN)/helm"

.PHONY: lint-charts
lint-charts: tools-charts
	$(HELM) lint --strict $(CHARTS_ROOT)/deploy/charts/tether-hub
	$(HELM) lint --strict $(CHARTS_ROOT)/deploy/charts/tether-agent $(CHARTS_AGENT_LINT_VALUES)

.PHONY: charts-test
charts-test: lint-charts
	cd $(CHARTS_ROOT) && TETHER_HELM=$(HELM) $(GO) test -count=1 -tags imagestest ./deploy/chartstest/ ./deploy/images/

# make test runs deploy/chartstest (through ./...), which needs helm.
test: tools-charts
tools: tools-charts

.PHONY: images
images: ## the hub and agent OCI images, bin/images/*.oci.tar (no container engine)
	cd $(CHARTS_ROOT) && $(GO) run ./deploy/images -out $(IMAGES_OUT) -epoch $(SOURCE_DATE_EPOCH) \
		-version $(IMAGES_VERSION) -commit $(IMAGES_COMMIT)
