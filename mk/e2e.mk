# End-to-end tests (test/e2e): tether-hub and tether-agent as real processes
# (built by the test itself) against member clusters of the kit, whose
# binaries kit-bins provides. A few minutes on 2 cores once warm.
#
#   e2e          the whole suite (issue 5's "Done when", asserted), its long
#                tests (test/tier) included
#   e2e-measure  also the measurements (apply → member latency for 100
#                Deployments × 3 clusters, the agents' idle RSS and CPU),
#                logged, never asserted

.PHONY: e2e e2e-measure

e2e: kit-bins ## end-to-end: hub and agents as processes, real member clusters
	TETHER_TESTS=long $(GO) test -count=1 -timeout 15m ./test/e2e/...

e2e-measure: kit-bins ## end-to-end measurements (latency, agent idle cost), logged with -v
	TETHER_E2E_MEASURE=1 $(GO) test -count=1 -timeout 20m -v -run 'TestMeasure' ./test/e2e/...
