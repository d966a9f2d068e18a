# make demo: a hub, three member clusters with their agents, and examples/
# applied, on this machine (test/demo, built on test/fleet and test/kit).
#
#   demo   build everything (bin/, the kit's binaries, bin/tether-demo), then
#          run the demo in the foreground until Ctrl-C. State in .demo/:
#          .demo/tether.conf (TETHER_CONFIG for tetherctl),
#          .demo/clusters/NAME/kubeconfig, .demo/pids (ROLE NAME PID).
#          DEMO_LISTEN moves the hub off 127.0.0.1:7443.
#
# bin/tether-demo is built with the flags of `make build` (-trimpath, and the
# Makefile's CGO_ENABLED=0), so it reuses every package that build compiled
# instead of compiling the client libraries a second time.
#
# The start time is taken before the build so that the demo can report the
# time to its ready table with the build included (cold and warm).

DEMO_LISTEN ?= 127.0.0.1:7443

.PHONY: demo

demo: ## hub + 3 member clusters + agents, examples/ applied; Ctrl-C stops it all
	@t0=$$(date +%s%N); \
	echo ">> make demo 1/3: our binaries (bin/); the first run downloads Go modules and compiles, minutes"; \
	$(MAKE) --no-print-directory build; \
	echo ">> make demo 2/3: the member-cluster kit (test/.cache/bin); the first run compiles Kubernetes, etcd and kwok into one binary, minutes"; \
	$(MAKE) --no-print-directory kit-bins; \
	echo ">> make demo 3/3: the demo (bin/tether-demo), built in $$(( ($$(date +%s%N) - t0) / 1000000000 ))s so far"; \
	$(GO) build -trimpath -o $(BIN)/tether-demo ./test/demo; \
	exec $(BIN)/tether-demo -dir .demo -listen '$(DEMO_LISTEN)' -examples examples -bin $(BIN) -started-at $$t0
