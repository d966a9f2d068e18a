# The Karmada baseline's workload on Tether (test/bench): a real hub and
# agents, 3 kit members of 5 kwok nodes, 100 Deployments Duplicated and
# Divided, an image update, deletion; the same objects written straight
# into the members as the limit; Karmada's recorded figures beside them.
# About 20 minutes on 2 idle cores with 3 runs. The table, results.json
# and the CDF plots go to $(BENCH_OUT).
#
#   BENCH_RUNS         runs of each variant and mode (default 3)
#   BENCH_DEPLOYMENTS  Deployments per variant (default 100)

BENCH_OUT         ?= $(CURDIR)/.cache/bench
BENCH_RUNS        ?= 3
BENCH_DEPLOYMENTS ?= 100

.PHONY: bench

bench: kit-bins ## the Karmada baseline workload on Tether and straight into the members; table and plots in .cache/bench
	@mkdir -p $(BENCH_OUT)
	$(GO) test -count=1 -timeout 150m -v -run 'TestBench' ./test/bench/ \
		-args -full -runs $(BENCH_RUNS) -deployments $(BENCH_DEPLOYMENTS) -out $(BENCH_OUT)
	@echo ">> $(BENCH_OUT)/bench.md"
