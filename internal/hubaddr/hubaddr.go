// Package hubaddr reads the hub addresses an agent dials: one address (a
// hub, or a load balancer in front of its replicas) or the addresses of a
// hub's replicas, comma-separated, as tether-agent's --hub takes them and
// tetherctl join prints them. It owns the parsing and the checks, so that
// both binaries accept the same lists. It imports only the standard
// library.
package hubaddr

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Split reads a list: addresses separated by commas, spaces around each
// trimmed. Empty entries are kept, for Validate to name them.
func Split(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	addrs := strings.Split(s, ",")
	for i := range addrs {
		addrs[i] = strings.TrimSpace(addrs[i])
	}
	return addrs
}

// Validate checks a list read by Split: at least one address, each
// host:port (a host, and a port from 1 to 65535), none twice. flag names
// the list in errors ("--hub"), which name the bad entry.
func Validate(flag string, addrs []string) error {
	if len(addrs) == 0 {
		return fmt.Errorf("%s: required: the hub's address, host:port, or its replicas' addresses separated by commas", flag)
	}
	seen := make(map[string]int, len(addrs))
	for i, addr := range addrs {
		if err := checkHostPort(addr); err != nil {
			return fmt.Errorf("%s %s: want host:port: %v", flag, entry(addrs, i), err)
		}
		if first, dup := seen[addr]; dup {
			return fmt.Errorf("%s %s: the same address as entry %d", flag, entry(addrs, i), first+1)
		}
		seen[addr] = i
	}
	return nil
}

// Hosts returns the host of each address of a validated list.
func Hosts(addrs []string) []string {
	hosts := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if h, _, err := net.SplitHostPort(a); err == nil {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// entry names entry i of a list in an error: the address alone when it is
// the only one.
func entry(addrs []string, i int) string {
	if len(addrs) == 1 {
		return fmt.Sprintf("%q", addrs[i])
	}
	return fmt.Sprintf("entry %d of %d, %q", i+1, len(addrs), addrs[i])
}

// checkHostPort checks that addr is host:port with a host and a numeric
// port.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "" {
		return errors.New("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q: want a number from 1 to 65535", port)
	}
	return nil
}
