package hubclient

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// lookupTimeout bounds the DNS lookups that find which configured address
// a stream's replica was (addrOf), when addresses are host names.
const lookupTimeout = 2 * time.Second

// moveOn prepares the next connection after the hub at addr (the peer
// address of the stream) said Goodbye SHUTDOWN or REBALANCE: the next
// stream comes on a new connection (a load balancer in front of the
// replicas may pick another backend), whose order tries the address that
// said goodbye last, after the others. Only connectLoop calls it.
func (c *Client) moveOn(ctx context.Context, addr string) {
	c.fresh = true
	if len(c.cfg.Addrs) == 1 {
		c.log.Info("the hub asked the agent to reconnect elsewhere; the next stream comes on a new connection", "hub_addr", addr)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	left := addrOf(ctx, c.cfg.Addrs, addr, net.DefaultResolver.LookupNetIP)
	if left == "" {
		c.log.Info("the hub asked the agent to reconnect elsewhere; it is none of the configured addresses (a proxy?), the next connection shuffles them", "hub_addr", addr)
		return
	}
	c.avoid = append(slices.DeleteFunc(c.avoid, func(a string) bool { return a == left }), left)
	c.log.Info("the hub asked the agent to reconnect elsewhere; the next connection tries the other addresses first",
		"hub_addr", addr, "tried_last", c.avoid)
}

// replicaOrder returns addrs with those in avoid last, in avoid's order
// (the address that said goodbye most recently last), and the others
// first, in the order shuffle leaves them (rand.Shuffle).
func replicaOrder(addrs, avoid []string, shuffle func(n int, swap func(i, j int))) []string {
	var first, last []string
	for _, a := range addrs {
		if !slices.Contains(avoid, a) {
			first = append(first, a)
		}
	}
	shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	for _, a := range avoid {
		if slices.Contains(addrs, a) {
			last = append(last, a)
		}
	}
	return append(first, last...)
}

// lookupFunc resolves a host name to its IP addresses
// (net.Resolver.LookupNetIP with network "ip").
type lookupFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

// addrOf returns the address of addrs (host:port each) that peer (the
// ip:port a stream reached) is: the first whose port is the peer's and
// whose host is the peer's IP, or a name that lookup resolves to it. It
// returns "" when none is (a proxy in between, a failed lookup, an
// unknown peer).
func addrOf(ctx context.Context, addrs []string, peer string, lookup lookupFunc) string {
	p, err := netip.ParseAddrPort(peer)
	if err != nil {
		return ""
	}
	ip, port := p.Addr().Unmap(), p.Port()
	var names []string // addresses by host name, looked up if no IP matches
	for _, a := range addrs {
		host, ok := hostOnPort(a, port)
		if !ok {
			continue
		}
		if h, err := netip.ParseAddr(host); err == nil {
			if h.Unmap() == ip {
				return a
			}
			continue
		}
		names = append(names, a)
	}
	for _, a := range names {
		host, _, _ := net.SplitHostPort(a)
		ips, err := lookup(ctx, "ip", host)
		if err != nil {
			continue
		}
		for _, h := range ips {
			if h.Unmap() == ip {
				return a
			}
		}
	}
	return ""
}

// hostOnPort returns the host of addr (host:port) when its port is port.
func hostOnPort(addr string, port uint16) (string, bool) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	n, err := strconv.ParseUint(p, 10, 16)
	return host, err == nil && uint16(n) == port
}
