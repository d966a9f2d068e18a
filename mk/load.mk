# The load tool (test/load): simulated agents in worker processes against a
# real tether-hub. `make load` runs the full scenarios (minutes, gigabytes);
# a smoke run of a few agents is test/load's TestSmoke, part of `make test`.
# Figures, plots and logs go to LOAD_DIR.

LOAD_DIR      ?= $(CURDIR)/.load
LOAD_AGENTS   ?= 10000
LOAD_WORKERS  ?= 8
# The million-works run: LOAD_TEMPLATES templates Duplicated to
# LOAD_CLUSTERS clusters.
LOAD_CLUSTERS  ?= 1000
LOAD_TEMPLATES ?= 1000
LOAD_FLAGS    ?=

.PHONY: load load-fleet load-million load-bin

load-bin:
	@mkdir -p $(BIN)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/tether-hub ./test/load/cmd/tether-load

load: load-fleet load-million ## load tool: 10,000 agents on one hub, then one million works (see mk/load.mk)

load-fleet: load-bin ## load tool: LOAD_AGENTS agents through every scenario (idle, fanout, works, restart, storm, fresh, flap)
	$(BIN)/tether-load run --dir $(LOAD_DIR)/fleet --agents $(LOAD_AGENTS) --workers $(LOAD_WORKERS) \
		--hub-bin $(BIN)/tether-hub --ramp 60s --works 100 --count-keys $(LOAD_FLAGS)

load-million: load-bin ## load tool: LOAD_TEMPLATES templates Duplicated to LOAD_CLUSTERS clusters, then restart
	$(BIN)/tether-load run --dir $(LOAD_DIR)/million --agents $(LOAD_CLUSTERS) --workers 4 \
		--hub-bin $(BIN)/tether-hub --ramp 10s --works $(LOAD_TEMPLATES) --scenarios idle,works,restart --count-keys $(LOAD_FLAGS)
