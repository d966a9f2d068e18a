# Hub administration and the hub's integration tests.

.PHONY: mint-agent test-integration

mint-agent: ## mint an agent certificate from a hub's CA (the alternative to bootstrap tokens): make mint-agent DATA_DIR=dir CLUSTER=name OUT=dir
	@test -n "$(DATA_DIR)" -a -n "$(CLUSTER)" -a -n "$(OUT)" || { echo "usage: make mint-agent DATA_DIR=dir CLUSTER=name OUT=dir"; exit 2; }
	$(GO) run ./cmd/tether-hub mint-agent --data-dir '$(DATA_DIR)' --cluster '$(CLUSTER)' --out '$(OUT)'

test-integration: ## the hub as a real process: admin.conf, agents over TLS, kill -9, 1,000 × 100 storage
	TETHER_TESTS=long $(GO) test -count=1 ./test/integration/...
