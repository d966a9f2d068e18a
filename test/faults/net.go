package faults

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// HubPort is the hub's port inside its own network namespace: the port
// space is the namespace's, so a fixed port never clashes and survives a
// restart of the hub.
const HubPort = 7443

// dialOutComment marks the rule in the hub's namespace that counts every
// connection the hub's namespace opens (NEW state, not on loopback).
const dialOutComment = "tether-faults-hub-dial-out"

// inboundComment marks the router's rule that drops (and counts) any
// connection opened from the hub's side towards an agent, as a NAT would.
const inboundComment = "tether-faults-inbound"

// Net is the network of one fault scenario, all in namespaces it creates:
//
//	host ns ──tfN── wan (router, NAT) ──hub── hub ns   (tether-hub)
//	                     │ └──────a0── agent ns 0      (tether-agent)
//	                     └────────a1── agent ns 1 …
//
// Addresses come from 10.231.N.0/24, N the first third octet no interface
// of the host uses: host↔wan .0/30, wan↔hub .4/30, wan↔agent i .(8+4i)/30.
// The router masquerades everything it forwards, so the hub only ever sees
// the router's address; the hub's namespace has no default route, and the
// router drops (and counts) new connections from the hub's side. The host
// reaches the hub (for the admin client) through the router; the agents
// reach the host's address (MemberAddr) for their member API servers,
// which a Proxy forwards to 127.0.0.1.
type Net struct {
	prefix  string   // "10.231.N."
	tag     string   // "tfN": namespace and interface prefix
	Agents  []string // cluster names, in namespace order
	created []string // namespaces created, for Close
	hostIf  string   // the host's end of host↔wan, once created
}

// NewNet creates the namespaces, links, routes and rules for a hub and one
// agent per cluster name. On error everything created is removed again. A
// subnet another test process took between the choice and the creation
// (a namespace or address that exists) makes it choose again.
func NewNet(clusters []string) (*Net, error) {
	if len(clusters) > 60 {
		return nil, errors.New("faults: at most 60 agents per Net")
	}
	var err error
	for range netAttempts {
		var n int
		if n, err = freeOctet(); err != nil {
			return nil, err
		}
		nw := &Net{prefix: fmt.Sprintf("10.231.%d.", n), tag: fmt.Sprintf("tf%d", n), Agents: clusters}
		if err = nw.build(); err == nil {
			return nw, nil
		}
		nw.Close()
		if !strings.Contains(err.Error(), "exists") {
			return nil, err
		}
	}
	return nil, err
}

// netAttempts bounds NewNet's choices of a subnet.
const netAttempts = 5

// freeOctet returns the first N in 1..250 such that no host interface has
// an address in 10.231.N.0/24 and no namespace tfN-* exists.
func freeOctet() (int, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return 0, fmt.Errorf("list addresses: %w", err)
	}
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return 0, fmt.Errorf("ip netns list: %w", err)
	}
	for n := 1; n <= 250; n++ {
		prefix, tag := fmt.Sprintf("10.231.%d.", n), fmt.Sprintf("tf%d-", n)
		used := bytes.Contains(out, []byte(tag))
		for _, a := range addrs {
			used = used || strings.HasPrefix(a.String(), prefix)
		}
		if !used {
			return n, nil
		}
	}
	return 0, errors.New("faults: no free 10.231.N.0/24")
}

func (nw *Net) addr(host int) string { return nw.prefix + strconv.Itoa(host) }

// HubNS, WanNS and AgentNS name the namespaces.
func (nw *Net) HubNS() string        { return nw.tag + "-hub" }
func (nw *Net) WanNS() string        { return nw.tag + "-wan" }
func (nw *Net) AgentNS(i int) string { return fmt.Sprintf("%s-a%d", nw.tag, i) }
func (nw *Net) agentIf(i int) string { return fmt.Sprintf("a%d", i) }

// AgentAddr is the address of agent i in its namespace.
func (nw *Net) AgentAddr(i int) string { return nw.addr(10 + 4*i) }

// HubListen is the hub's --listen address (in the hub's namespace).
func (nw *Net) HubListen() string { return net.JoinHostPort(nw.addr(6), strconv.Itoa(HubPort)) }

// ProxyPort is the port of the hub's member proxy (--proxy-listen) in a
// scenario that serves it.
const ProxyPort = 7444

// ProxyListen is the hub's member proxy address, on the hub's address.
func (nw *Net) ProxyListen() string { return net.JoinHostPort(nw.addr(6), strconv.Itoa(ProxyPort)) }

// MemberAddr is the host's address on host↔wan: the agents' member API
// servers are reached there (see Proxy).
func (nw *Net) MemberAddr() string { return nw.addr(1) }

// Exec returns the command prefix that runs a process in namespace ns.
func Exec(ns string) []string { return []string{"ip", "netns", "exec", ns} }

// build creates everything; Close undoes what got done.
func (nw *Net) build() error {
	wan, hub := nw.WanNS(), nw.HubNS()
	nss := []string{wan, hub}
	for i := range nw.Agents {
		nss = append(nss, nw.AgentNS(i))
	}
	for _, ns := range nss {
		if err := run("ip", "netns", "add", ns); err != nil {
			return err
		}
		nw.created = append(nw.created, ns)
		if err := nsSetup(ns); err != nil {
			return err
		}
	}
	// host ↔ wan; Close removes the host's end only once it is ours.
	if err := run("ip", "link", "add", nw.tag, "type", "veth", "peer", "name", "host", "netns", wan); err != nil {
		return err
	}
	nw.hostIf = nw.tag
	steps := append(append(nw.linkSteps(), nw.ruleSteps()...), nw.agentSteps()...)
	for _, s := range steps {
		if err := run(s...); err != nil {
			return err
		}
	}
	return nil
}

// linkSteps address the host↔wan link and the wan↔hub one; the host gets
// a route to the hub's link, the hub no default route.
func (nw *Net) linkSteps() [][]string {
	wan, hub := nw.WanNS(), nw.HubNS()
	return [][]string{
		{"ip", "addr", "add", nw.addr(1) + "/30", "dev", nw.hostIf},
		{"ip", "link", "set", nw.hostIf, "up"},
		{"ip", "-n", wan, "addr", "add", nw.addr(2) + "/30", "dev", "host"},
		{"ip", "-n", wan, "link", "set", "host", "up"},
		{"ip", "route", "add", nw.prefix + "4/30", "via", nw.addr(2)},
		{"ip", "-n", wan, "link", "add", "hub", "type", "veth", "peer", "name", "wan", "netns", hub},
		{"ip", "-n", wan, "addr", "add", nw.addr(5) + "/30", "dev", "hub"},
		{"ip", "-n", wan, "link", "set", "hub", "up"},
		{"ip", "-n", hub, "addr", "add", nw.addr(6) + "/30", "dev", "wan"},
		{"ip", "-n", hub, "link", "set", "wan", "up"},
	}
}

// ruleSteps make the router forward and masquerade, and refuse (and
// count) what opens a connection from the hub's side; and count in the
// hub's namespace what it opens.
func (nw *Net) ruleSteps() [][]string {
	wan, hub := nw.WanNS(), nw.HubNS()
	steps := [][]string{
		{"ip", "netns", "exec", wan, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"},
		{"ip", "netns", "exec", wan, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", "hub", "-j", "MASQUERADE"},
		{"ip", "netns", "exec", wan, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", "host", "-j", "MASQUERADE"},
	}
	steps = append(steps, openRules(wan, "FORWARD", []string{"-i", "hub"}, inboundComment, "DROP")...)
	// Anything else new from the hub's side (a packet of a flow the router
	// forgot) is dropped too, as a NAT would, but not counted: it opens
	// nothing.
	steps = append(steps, []string{"ip", "netns", "exec", wan, "iptables", "-A", "FORWARD", "-i", "hub", "-m", "conntrack", "--ctstate", "NEW", "-j", "DROP"})
	return append(steps, openRules(hub, "OUTPUT", []string{"!", "-o", "lo"}, dialOutComment, "ACCEPT")...)
}

// agentSteps link and address each agent's namespace, with a default
// route through the router.
func (nw *Net) agentSteps() [][]string {
	var steps [][]string
	for i := range nw.Agents {
		ns, ifc := nw.AgentNS(i), nw.agentIf(i)
		steps = append(steps,
			[]string{"ip", "-n", nw.WanNS(), "link", "add", ifc, "type", "veth", "peer", "name", "wan", "netns", ns},
			[]string{"ip", "-n", nw.WanNS(), "addr", "add", nw.addr(9+4*i) + "/30", "dev", ifc},
			[]string{"ip", "-n", nw.WanNS(), "link", "set", ifc, "up"},
			[]string{"ip", "-n", ns, "addr", "add", nw.AgentAddr(i) + "/30", "dev", "wan"},
			[]string{"ip", "-n", ns, "link", "set", "wan", "up"},
			[]string{"ip", "-n", ns, "route", "add", "default", "via", nw.addr(9 + 4*i)},
		)
	}
	return steps
}

// openRules are the rules, in chain of namespace ns, that count (with
// comment) the packets matching match that open a connection: a TCP SYN
// or a UDP packet in conntrack state NEW. Other packets in state NEW are
// not openings: after a long pause, a process's kernel sends packets of
// connections that conntrack has forgotten (a reset, a late segment).
func openRules(ns, chain string, match []string, comment, target string) [][]string {
	var out [][]string
	for _, proto := range [][]string{{"-p", "tcp", "--syn"}, {"-p", "udp"}} {
		r := append([]string{"ip", "netns", "exec", ns, "iptables", "-A", chain}, match...)
		r = append(append(r, proto...), "-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", comment, "-j", target)
		out = append(out, r)
	}
	return out
}

// nsSetup brings up a new namespace's loopback and turns IPv6 off in it,
// so that every packet the counters see is IPv4.
func nsSetup(ns string) error {
	if err := run("ip", "-n", ns, "link", "set", "lo", "up"); err != nil {
		return err
	}
	return run("ip", "netns", "exec", ns, "sh", "-c", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6")
}

// Close removes the namespaces (their links and rules go with them) and the
// host's link and route. It is safe to call more than once.
func (nw *Net) Close() error {
	var errs []error
	if nw.hostIf != "" {
		if err := run("ip", "link", "del", nw.hostIf); err != nil && linkExists(nw.hostIf) {
			errs = append(errs, err)
		}
		nw.hostIf = ""
	}
	for i := len(nw.created) - 1; i >= 0; i-- {
		if err := run("ip", "netns", "del", nw.created[i]); err != nil {
			errs = append(errs, err)
		}
	}
	nw.created = nil
	return errors.Join(errs...)
}

func linkExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// run runs a command, its output quoted in the error.
func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Supported says why this machine cannot run the fault suite, or nil: it
// needs root (namespaces, links, iptables), ip and iptables on PATH, and
// network namespaces in the kernel.
func Supported() error {
	if os.Geteuid() != 0 {
		return errors.New("not root: network namespaces and iptables need CAP_NET_ADMIN")
	}
	for _, bin := range []string{"ip", "iptables"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%s not on PATH (test/faults/netdeps.sh installs it): %w", bin, err)
		}
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("no network namespaces in this kernel: %w", err)
	}
	return nil
}
