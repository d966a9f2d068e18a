# mk/proto.mk: the wire contract's tools and code generation.
#
# Included by the main Makefile, which defines TOOLS_BIN before the include;
# also usable alone from the repository root:
#
#   make -f mk/proto.mk tools-proto generate-proto lint-proto
#
# Targets:
#   tools-proto     install the pinned buf, protoc-gen-go, protoc-gen-go-grpc and
#                   protoc-gen-doc into $(TOOLS_BIN) (skipped when already there)
#   tools-grpcurl   install the pinned grpcurl (test/grpcurl runs the README's calls with it)
#   grpcurl-path    install grpcurl if missing and print its path (last line of output)
#   generate-proto  regenerate api/gen and the API reference docs/api/README.md from
#                   api/tether/**/*.proto (byte-for-byte reproducible)
#   lint-proto      buf lint (STANDARD rules, see buf.yaml)
#   breaking-proto  buf breaking (FILE rules) against $(PROTO_BREAKING_AGAINST): the
#                   previous release, which runs beside this one in a rolling upgrade
#   compat-contract write the previous release's contract ($(PROTO_COMPAT_BASE)) as a buf
#                   image into test/grpcurl/testdata, for the test of a client built
#                   from it; rerun when the pin moves
#   check-proto     lint, regenerate, and fail if api/gen or docs/api differs from git (CI)
#   check-api-docs  regenerate, and fail if docs/api differs from git; a prerequisite
#                   of the main Makefile's check-generated, so `make test` runs it
#
# Each tool is installed with `go install` into its own versioned directory,
# $(TOOLS_BIN)/.versions/NAME@VERSION/NAME, which is the file target: a
# changed pin installs the new version, an unchanged one installs nothing.
# $(TOOLS_BIN)/NAME is a symlink to the pinned one, so that buf finds the
# plugins on PATH (buf.gen.yaml names them as local plugins).

TOOLS_BIN ?= $(CURDIR)/.cache/tools

# The repository root, from this file's location, so that `make -C` and
# includes from elsewhere work.
PROTO_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)

# Pinned tool versions. buf newer than v1.60.0 does not install with the Go
# toolchain here. protoc-gen-go must match google.golang.org/protobuf in
# go.mod (the generated code checks the runtime's version), so it is read
# from there; bumping the runtime then changes the generated headers, and
# `make generate-proto` must be rerun.
BUF_VERSION                := v1.60.0
PROTOC_GEN_GO_VERSION      := $(shell awk '$$1 == "google.golang.org/protobuf" { print $$2; exit }' $(PROTO_ROOT)/go.mod)
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
# protoc-gen-doc writes the API reference (docs/api/README.md) from the
# .proto comments; grpcurl is what the README's "Any language" calls use.
PROTOC_GEN_DOC_VERSION     := v1.5.1
GRPCURL_VERSION            := v1.9.3

ifeq ($(PROTOC_GEN_GO_VERSION),)
$(error mk/proto.mk: google.golang.org/protobuf not found in $(PROTO_ROOT)/go.mod)
endif

# TOOLS_BIN made absolute, as recipes change directory.
PROTO_TOOLS_BIN    := $(abspath $(TOOLS_BIN))
PROTO_VERSIONS_DIR := $(PROTO_TOOLS_BIN)/.versions
BUF                := $(PROTO_VERSIONS_DIR)/buf@$(BUF_VERSION)/buf
PROTOC_GEN_GO      := $(PROTO_VERSIONS_DIR)/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)/protoc-gen-go
PROTOC_GEN_GO_GRPC := $(PROTO_VERSIONS_DIR)/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)/protoc-gen-go-grpc
PROTOC_GEN_DOC     := $(PROTO_VERSIONS_DIR)/protoc-gen-doc@$(PROTOC_GEN_DOC_VERSION)/protoc-gen-doc
PROTO_TOOLS        := $(BUF) $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC) $(PROTOC_GEN_DOC)
GRPCURL            := $(PROTO_VERSIONS_DIR)/grpcurl@$(GRPCURL_VERSION)/grpcurl

# The generated tree: generate-proto writes every *.pb.go under it; the only
# hand-written files there are the packages' doc.go.
PROTO_GEN_DIR := api/gen
# The generated API reference (buf.gen.yaml's protoc-gen-doc output).
PROTO_DOC_DIR := docs/api

# What breaking-proto compares against: a buf input, by default the commit
# of the previous release (PROTO_COMPAT_BASE). Hubs and agents of two
# adjacent versions talk to each other during a rolling upgrade, so the wire
# contract may only grow compatibly from one release to the next; move the
# pin forward when a release lands. Needs the clone's history (CI clones it
# whole); a missing commit fails the check rather than skipping it.
PROTO_COMPAT_BASE      ?= 57a6d997b10715994f8e8c3a4f6a24e82f182258
PROTO_BREAKING_AGAINST ?= .git\#ref=$(PROTO_COMPAT_BASE)

# proto_install installs module path $(1) at version $(2) as file $(3):
# go install into a temporary GOBIN, then a rename, so that an interrupted
# install never leaves a file that looks complete.
define proto_install
	@mkdir -p $(dir $(3))
	@echo "install $(1)@$(2)"
	@tmp=$$(mktemp -d "$(dir $(3)).tmp.XXXXXX") && \
		GOBIN="$$tmp" go install $(1)@$(2) && \
		mv "$$tmp/$(notdir $(3))" $(3) && rmdir "$$tmp" || { rm -rf "$$tmp"; exit 1; }
endef

$(BUF):
	$(call proto_install,github.com/bufbuild/buf/cmd/buf,$(BUF_VERSION),$@)

$(PROTOC_GEN_GO):
	$(call proto_install,google.golang.org/protobuf/cmd/protoc-gen-go,$(PROTOC_GEN_GO_VERSION),$@)

$(PROTOC_GEN_GO_GRPC):
	$(call proto_install,google.golang.org/grpc/cmd/protoc-gen-go-grpc,$(PROTOC_GEN_GO_GRPC_VERSION),$@)

$(PROTOC_GEN_DOC):
	$(call proto_install,github.com/pseudomuto/protoc-gen-doc/cmd/protoc-gen-doc,$(PROTOC_GEN_DOC_VERSION),$@)

$(GRPCURL):
	$(call proto_install,github.com/fullstorydev/grpcurl/cmd/grpcurl,$(GRPCURL_VERSION),$@)

.PHONY: tools-grpcurl grpcurl-path
tools-grpcurl: $(GRPCURL)
	@t=$(GRPCURL); ln -sfn "$${t#$(PROTO_TOOLS_BIN)/}" "$(PROTO_TOOLS_BIN)/grpcurl"

grpcurl-path: $(GRPCURL)
	@echo $(GRPCURL)

# The main Makefile's `make tools` installs grpcurl too, and so does
# `make test` before its go test, whose test/grpcurl uses it.
tools: tools-grpcurl
test: tools-grpcurl

.PHONY: tools-proto
tools-proto: $(PROTO_TOOLS)
	@for t in $(PROTO_TOOLS); do \
		ln -sfn "$${t#$(PROTO_TOOLS_BIN)/}" "$(PROTO_TOOLS_BIN)/$$(basename $$t)"; \
	done

# Old output (*.pb.go) is removed first so that a deleted .proto file deletes
# its generated code too; the hand-written doc.go files stay. PATH has the
# pinned plugins first; buf.gen.yaml uses no remote plugins and no managed
# mode, so nothing but the inputs and the pinned versions shapes the output.
.PHONY: generate-proto
generate-proto: tools-proto
	cd $(PROTO_ROOT) && if [ -d $(PROTO_GEN_DIR) ]; then find $(PROTO_GEN_DIR) -type f -name '*.pb.go' -delete; fi
	cd $(PROTO_ROOT) && PATH="$(PROTO_TOOLS_BIN):$$PATH" $(BUF) generate

.PHONY: lint-proto
lint-proto: tools-proto
	cd $(PROTO_ROOT) && $(BUF) lint

.PHONY: breaking-proto
breaking-proto: tools-proto
	cd $(PROTO_ROOT) && $(BUF) breaking --against '$(PROTO_BREAKING_AGAINST)'

# The previous release's contract as descriptors (no comments), which
# test/grpcurl's TestPreviousReleaseClient calls today's hub with. The
# file's name carries the commit; the test names the file.
PROTO_COMPAT_IMAGE := test/grpcurl/testdata/contract-$(shell echo $(PROTO_COMPAT_BASE) | cut -c1-7).binpb

.PHONY: compat-contract
compat-contract: tools-proto
	cd $(PROTO_ROOT) && $(BUF) build '$(PROTO_BREAKING_AGAINST)' --exclude-source-info -o $(PROTO_COMPAT_IMAGE)

# check-proto fails when the committed api/gen is not what the committed
# .proto files generate (modified, deleted or new files alike).
.PHONY: check-proto
check-proto: lint-proto generate-proto check-api-docs
	@cd $(PROTO_ROOT) && if [ -n "$$(git status --porcelain -- $(PROTO_GEN_DIR))" ]; then \
		git status --porcelain -- $(PROTO_GEN_DIR); \
		echo "api/gen is stale: run make generate-proto and commit the result" >&2; exit 1; \
	fi

# check-api-docs fails when the committed API reference is not what the
# committed .proto comments generate. The main Makefile's check-generated
# (run by `make test`) checks api/gen itself and gets this as a prerequisite.
.PHONY: check-api-docs
check-api-docs: generate-proto
	@cd $(PROTO_ROOT) && if [ -n "$$(git status --porcelain -- $(PROTO_DOC_DIR))" ]; then \
		git status --porcelain -- $(PROTO_DOC_DIR); \
		echo "$(PROTO_DOC_DIR) is stale: run make generate-proto and commit the result" >&2; exit 1; \
	fi

check-generated: check-api-docs
