package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// ErrDestinationDenied is the error (under errors.Is) of a call whose
// destination address the Policy denies. The connection is refused before
// it is made: the webhook receives nothing.
var ErrDestinationDenied = errors.New("webhook: destination denied")

// deniedRange is an address range no webhook may reach unless allowed.
type deniedRange struct {
	prefix netip.Prefix
	why    string
}

// deniedRanges are the addresses a webhook call never connects to unless
// Policy.Allow covers them: the hub's own host, link-local networks (where
// clouds serve instance metadata and credentials) and the known metadata
// addresses outside them. Private (RFC 1918, ULA) ranges are allowed: that
// is where in-cluster webhooks live.
var deniedRanges = []deniedRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata 169.254.169.254)"},
	{netip.MustParsePrefix("100.100.100.200/32"), "cloud metadata (Alibaba)"},
	{netip.MustParsePrefix("168.63.129.16/32"), "cloud host endpoint (Azure)"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata (AWS IPv6)"},
}

// nat64 is the well-known NAT64 prefix (RFC 6052): its addresses reach the
// IPv4 address in their last 32 bits, which is checked as well.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Policy decides which addresses webhook calls may connect to. It is
// checked on the resolved address of every connection attempt (the
// dialer's Control function), so a name that resolves, or later
// re-resolves, to a denied address is refused as well.
type Policy struct {
	// Allow are ranges allowed although deniedRanges hold them, e.g.
	// 127.0.0.0/8 for a webhook on the hub's host (tether-hub
	// --webhook-allow-cidrs).
	Allow []netip.Prefix
}

// Check returns an error wrapping ErrDestinationDenied when addr is in a
// denied range and no allowed range holds it.
func (p Policy) Check(addr netip.Addr) error {
	addr = addr.Unmap().WithZone("")
	for _, a := range p.Allow {
		if a.Contains(addr) {
			return nil
		}
	}
	if nat64.Contains(addr) {
		b := addr.As16()
		if err := p.Check(netip.AddrFrom4([4]byte(b[12:]))); err != nil {
			return err
		}
	}
	for _, d := range deniedRanges {
		if d.prefix.Contains(addr) {
			return fmt.Errorf("%w: %s is %s (allow it with tether-hub --webhook-allow-cidrs)", ErrDestinationDenied, addr, d.why)
		}
	}
	return nil
}

// control is a net.Dialer Control function: address is the resolved
// "ip:port" about to be connected.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: address %q is not an IP address and port", ErrDestinationDenied, address)
	}
	return p.Check(ap.Addr())
}
