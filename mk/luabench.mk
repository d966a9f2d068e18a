# mk/luabench.mk: Tether's Lua engine against Karmada v1.18.2's (issue 16).
#
# test/luabench is a module of its own (Karmada and the Kubernetes libraries
# it pulls stay out of Tether's go.mod); it runs the same scripts on the same
# inputs through both engines.
#
# Targets:
#   bench-lua        -count $(LUABENCH_COUNT) benchmarks of both engines with -benchmem,
#                    written to .cache/luabench.txt, then benchstat with the
#                    engines side by side (ns/op, B/op, allocs/op per operation)
#   bench-lua-smoke  TestSameResults (both engines give the same results for
#                    the same inputs) and one iteration of every benchmark;
#                    `make test` runs it
#   tools-benchstat  install the pinned benchstat into $(TOOLS_BIN)

TOOLS_BIN ?= $(CURDIR)/.cache/tools

LUABENCH_DIR := test/luabench
# LUABENCH_COUNT is how many times each benchmark runs (benchstat's samples).
LUABENCH_COUNT ?= 5
# LUABENCH_TIME is each run's -benchtime.
LUABENCH_TIME ?= 1s
LUABENCH_OUT := $(CURDIR)/.cache/luabench.txt

# golang.org/x/perf has no releases; the pin is a pseudo-version.
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
BENCHSTAT         := $(TOOLS_BIN)/.versions/benchstat@$(BENCHSTAT_VERSION)/benchstat

$(BENCHSTAT):
	@mkdir -p $(dir $@)
	@echo "install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)"
	@tmp=$$(mktemp -d "$(dir $@).tmp.XXXXXX") && \
		GOBIN="$$tmp" $(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION) && \
		mv "$$tmp/benchstat" $@ && rmdir "$$tmp" || { rm -rf "$$tmp"; exit 1; }

.PHONY: tools-benchstat bench-lua bench-lua-smoke
tools-benchstat: $(BENCHSTAT)
	@ln -sfn "$(patsubst $(TOOLS_BIN)/%,%,$(BENCHSTAT))" "$(TOOLS_BIN)/benchstat"

bench-lua: tools-benchstat ## Lua engine vs Karmada v1.18.2's luavm: ns/op, B/op, allocs/op per script (benchstat)
	@mkdir -p $(dir $(LUABENCH_OUT))
	cd $(LUABENCH_DIR) && $(GO) test -run '^$$' -bench . -benchmem -count $(LUABENCH_COUNT) -benchtime $(LUABENCH_TIME) . | tee $(LUABENCH_OUT)
	$(BENCHSTAT) -col /engine $(LUABENCH_OUT)

bench-lua-smoke: ## both Lua engines give the same results; one iteration of each benchmark
	cd $(LUABENCH_DIR) && $(GO) test -count=1 -run . -bench . -benchtime 1x .

tools: tools-benchstat
test: bench-lua-smoke
