package ha

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// Netns is a network namespace for one replica, linked to the host by a
// veth pair on 10.233.N.0/30: the host's end .1, the namespace's .2 with a
// default route through the host. The replica reaches etcd's client ports
// on the host's end; agents and the test reach the replica on the
// namespace's. CutFrom drops its traffic to and from etcd with iptables
// inside the namespace, leaving agents and clients their way in.
type Netns struct {
	Name   string
	HostIP net.IP // the host's end of the link
	NSIP   net.IP // the namespace's end: the replica listens there
	hostIf string // the host's interface, once created
	made   bool   // the namespace exists
}

// NewNetns creates a namespace on the first 10.233.N.0/30 no interface of
// the host uses. On error everything created is removed again.
func NewNetns() (*Netns, error) {
	n, err := freeNet()
	if err != nil {
		return nil, err
	}
	prefix := fmt.Sprintf("10.233.%d.", n)
	ns := &Netns{Name: fmt.Sprintf("tha%d", n), HostIP: net.ParseIP(prefix + "1"), NSIP: net.ParseIP(prefix + "2")}
	if err := ns.build(); err != nil {
		return nil, errors.Join(err, ns.Close())
	}
	return ns, nil
}

func (ns *Netns) build() error {
	if err := run("ip", "netns", "add", ns.Name); err != nil {
		return err
	}
	ns.made = true
	if err := run("ip", "link", "add", ns.Name, "type", "veth", "peer", "name", "host", "netns", ns.Name); err != nil {
		return err
	}
	ns.hostIf = ns.Name
	for _, s := range [][]string{
		{"ip", "addr", "add", ns.HostIP.String() + "/30", "dev", ns.hostIf},
		{"ip", "link", "set", ns.hostIf, "up"},
		{"ip", "-n", ns.Name, "link", "set", "lo", "up"},
		{"ip", "-n", ns.Name, "addr", "add", ns.NSIP.String() + "/30", "dev", "host"},
		{"ip", "-n", ns.Name, "link", "set", "host", "up"},
		{"ip", "-n", ns.Name, "route", "add", "default", "via", ns.HostIP.String()},
	} {
		if err := run(s...); err != nil {
			return err
		}
	}
	return nil
}

// Exec is the command prefix that runs a process in the namespace.
func (ns *Netns) Exec() []string { return []string{"ip", "netns", "exec", ns.Name} }

// cutRules are the namespace's rules that drop every packet between it and
// the host's ports (etcd's client ports), both ways.
func (ns *Netns) cutRules(ports []int) [][]string {
	var rules [][]string
	for _, p := range ports {
		port := strconv.Itoa(p)
		rules = append(rules,
			[]string{"OUTPUT", "-d", ns.HostIP.String(), "-p", "tcp", "--dport", port, "-j", "DROP"},
			[]string{"INPUT", "-s", ns.HostIP.String(), "-p", "tcp", "--sport", port, "-j", "DROP"})
	}
	return rules
}

// CutFrom partitions the namespace from the host's ports (iptables DROP,
// inserted first), until Heal.
func (ns *Netns) CutFrom(ports []int) error { return ns.rules("-I", ports) }

// Heal deletes CutFrom's rules.
func (ns *Netns) Heal(ports []int) error { return ns.rules("-D", ports) }

func (ns *Netns) rules(op string, ports []int) error {
	for _, r := range ns.cutRules(ports) {
		if err := run(append([]string{"ip", "netns", "exec", ns.Name, "iptables", op}, r...)...); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the namespace and the host's end of the link. It is safe
// to call more than once.
func (ns *Netns) Close() error {
	var errs []error
	if ns.hostIf != "" {
		if err := run("ip", "link", "del", ns.hostIf); err != nil {
			if _, ierr := net.InterfaceByName(ns.hostIf); ierr == nil {
				errs = append(errs, err)
			}
		}
		ns.hostIf = ""
	}
	if ns.made {
		if err := run("ip", "netns", "del", ns.Name); err != nil {
			errs = append(errs, err)
		}
		ns.made = false
	}
	return errors.Join(errs...)
}

// freeNet returns the first N in 1..250 such that no host interface has an
// address in 10.233.N.0/24 and no namespace thaN exists.
func freeNet() (int, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return 0, fmt.Errorf("list addresses: %w", err)
	}
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return 0, fmt.Errorf("ip netns list: %w", err)
	}
	for n := 1; n <= 250; n++ {
		used := slices.Contains(strings.Fields(string(out)), fmt.Sprintf("tha%d", n))
		for _, a := range addrs {
			used = used || strings.HasPrefix(a.String(), fmt.Sprintf("10.233.%d.", n))
		}
		if !used {
			return n, nil
		}
	}
	return 0, errors.New("ha: no free 10.233.N.0/24")
}

// run runs a command, its output quoted in the error.
func run(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
