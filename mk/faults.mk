# The fault suite (test/faults, issue 11): hub, agents and member clusters as
# processes, the agents in network namespaces behind NAT, faults injected
# with iptables and signals, every member watched for deletes. Needs root.
#
#   faults       every scenario, the long ones included (10 min partition,
#                15 min hub pause, flapping, restore from a snapshot): about
#                FAULTS_ALL_TIME. FAULTS=full leaves the long ones out (about
#                FAULTS_FULL_TIME; what CI runs, .ci/run). The whole output
#                goes to .cache/faults.log; the console shows the scenarios,
#                their FIGURES lines and failures.
#
# A smoke subset (a malformed status, and TestHubNeverDialsOut) also runs in
# plain `go test ./...`, so in `make test`.

FAULTS ?= all

.PHONY: faults faults-deps

faults-deps: ## install ip and iptables for the fault suite if missing (Debian, as root; fails saying what is missing otherwise)
	@test/faults/netdeps.sh

# make test runs the fault suite's smoke part, which fails without them.
test: faults-deps

faults: faults-deps kit-bins build ## the fault suite: partitions, pauses, kills, bad data; prints each scenario's figures
	@mkdir -p .cache
	TETHER_FAULTS=$(FAULTS) TETHER_BIN=$(BIN) $(GO) test -count=1 -timeout 90m -v -run 'TestFaults|TestHubNeverDialsOut' ./test/faults/ 2>&1 | tee .cache/faults.log | grep -E '^(=== RUN|--- |\s+--- |ok|FAIL|PASS)|FIGURES|spurious delete|want'
