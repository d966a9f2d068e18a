# The HA suite (test/ha, issue 12): a 3-member etcd cluster over TLS, three
# tether-hub replicas on it, member clusters of the kit with their agents,
# and faults: kill -9 of the leader under load, rolling restart, the leader
# partitioned from etcd (iptables in a network namespace: root), a replica
# with another CA, a rolling upgrade from the previous release (built from
# git into test/.cache), a lagging replica serving returning agents, the
# store restored from a cold copy with a replica on an empty data
# directory, the leader killed in an eviction's grace.
#
#   ha   every scenario, some 9 minutes on 2 cores once warm (511 s). The
#        whole output goes to .cache/ha.log; the console shows the
#        scenarios, their FIGURES lines and failures.
#
# A smoke subset (a replica with another CA; some 10 s) also runs in plain
# `go test ./...`, so in `make test`.

.PHONY: ha

ha: faults-deps kit-bins build ## the HA suite: replicas on one etcd, leader killed, partitioned, rolled, upgraded; prints figures
	@mkdir -p .cache
	TETHER_HA=full TETHER_BIN=$(BIN) $(GO) test -count=1 -timeout 40m -v -run 'TestHA' ./test/ha/ 2>&1 | tee .cache/ha.log | grep -E '^(=== RUN|--- |\s+--- |ok|FAIL|PASS)|FIGURES|want|changed|spurious'
