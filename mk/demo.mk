# make demo: a hub, three member clusters with their agents, and examples/
# applied, on this machine (test/demo, built on test/fleet and test/kit).
#
#   demo   build everything (bin/, the kit's binaries, bin/tether-demo), then
#          run the demo in the foreground until Ctrl-C. State in .demo/:
#          .demo/tether.conf (TETHER_CONFIG for tetherctl),
#          .demo/clusters/NAME/kubeconfig, .demo/pids (ROLE NAME PID).
#          DEMO_LISTEN moves the hub off 127.0.0.1:7443.
#
# The start time is taken before the build so that the demo can report the
# time to its ready table with the build included (cold and warm).

DEMO_LISTEN ?= 127.0.0.1:7443

.PHONY: demo

demo: ## hub + 3 member clusters + agents, examples/ applied; Ctrl-C stops it all
	@t0=$$(date +%s%N); \
	echo ">> make demo: building the binaries (bin/) and the member-cluster kit (test/.cache/bin)"; \
	$(MAKE) --no-print-directory build kit-bins; \
	echo ">> building the demo (bin/tether-demo)"; \
	$(GO) build -o $(BIN)/tether-demo ./test/demo; \
	exec $(BIN)/tether-demo -dir .demo -listen '$(DEMO_LISTEN)' -examples examples -bin $(BIN) -started-at $$t0
