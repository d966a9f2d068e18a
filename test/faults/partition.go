package faults

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// partitionRules are the router's FORWARD rules that cut agent i off the
// hub, both ways; the agent keeps its member API server (through the
// host), as an edge site that lost its uplink does.
func (nw *Net) partitionRules(i int) [][]string {
	ifc := nw.agentIf(i)
	return [][]string{
		{"FORWARD", "-i", ifc, "-o", "hub", "-j", "DROP"},
		{"FORWARD", "-i", "hub", "-o", ifc, "-j", "DROP"},
	}
}

// index returns the namespace index of a cluster.
func (nw *Net) index(cluster string) (int, error) {
	i := slices.Index(nw.Agents, cluster)
	if i < 0 {
		return 0, fmt.Errorf("faults: no agent namespace for cluster %q", cluster)
	}
	return i, nil
}

// Partition drops every packet between cluster's agent and the hub (iptables
// DROP on the router, inserted first), until Heal.
func (nw *Net) Partition(cluster string) error {
	return nw.rules(cluster, "-I")
}

// Heal deletes Partition's rules.
func (nw *Net) Heal(cluster string) error {
	return nw.rules(cluster, "-D")
}

func (nw *Net) rules(cluster, op string) error {
	i, err := nw.index(cluster)
	if err != nil {
		return err
	}
	for _, r := range nw.partitionRules(i) {
		args := append([]string{"ip", "netns", "exec", nw.WanNS(), "iptables", op}, r...)
		if err := run(args...); err != nil {
			return err
		}
	}
	return nil
}

// PartitionAll cuts every agent off the hub at once: a hub-side outage
// (its own network, its load balancer).
func (nw *Net) PartitionAll() error {
	for _, c := range nw.Agents {
		if err := nw.Partition(c); err != nil {
			return err
		}
	}
	return nil
}

// HealAll deletes every partition rule PartitionAll inserted.
func (nw *Net) HealAll() error {
	for _, c := range nw.Agents {
		if err := nw.Heal(c); err != nil {
			return err
		}
	}
	return nil
}

// HubDialOuts is the number of connections the hub's namespace has opened
// (TCP SYNs and UDP packets in state NEW leaving it other than on
// loopback). The hub only accepts connections, so it must stay 0.
func (nw *Net) HubDialOuts() (int64, error) {
	return counter(nw.HubNS(), "OUTPUT", dialOutComment)
}

// InboundAttempts is the number of packets (TCP SYNs, new UDP) the router
// dropped because they opened a connection from the hub's side towards an
// agent: 0 unless something tried to reach an agent.
func (nw *Net) InboundAttempts() (int64, error) {
	return counter(nw.WanNS(), "FORWARD", inboundComment)
}

// counter sums the packet counters of the rules with comment in chain of
// namespace ns's filter table.
func counter(ns, chain, comment string) (int64, error) {
	out, err := exec.Command("ip", "netns", "exec", ns, "iptables", "-L", chain, "-n", "-v", "-x").Output()
	if err != nil {
		return 0, fmt.Errorf("iptables -L %s in %s: %w", chain, ns, err)
	}
	var sum int64
	found := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, comment) {
			continue
		}
		fields := strings.Fields(line)
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("iptables counter %q: %w", line, err)
		}
		sum, found = sum+n, true
	}
	if !found {
		return 0, fmt.Errorf("no rule %q in %s %s", comment, ns, chain)
	}
	return sum, nil
}
