# The hostile-input suite (test/security, issue 14): every attack against a
# real tether-hub process while a probe applies and heartbeats. It runs in
# `make test` as part of ./...; this target runs it alone and prints its
# figures (probe latencies p50/p99/max, hub RSS before/after each attack),
# which it also leaves in .cache/security-report.md (and .json).

.PHONY: security-report

security-report: ## the hostile-input suite alone; prints each attack's outcome, probe latencies and hub memory
	@mkdir -p .cache && rm -f .cache/security-report.md .cache/security-report.json
	@status=0; TETHER_TESTS=long TETHER_SECURITY_REPORT=$(CURDIR)/.cache/security-report.md $(GO) test -count=1 -timeout 20m ./test/security/ || status=$$?; \
	cat .cache/security-report.md; exit $$status
