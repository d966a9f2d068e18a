package hubclient

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"
)

func TestReplicaOrder(t *testing.T) {
	reverse := func(n int, swap func(i, j int)) {
		for i := 0; i < n/2; i++ {
			swap(i, n-1-i)
		}
	}
	tests := []struct {
		name  string
		addrs []string
		avoid []string
		want  []string
	}{
		{"none avoided: all shuffled", []string{"a", "b", "c"}, nil, []string{"c", "b", "a"}},
		{"the first last, the others shuffled", []string{"a", "b", "c"}, []string{"a"}, []string{"c", "b", "a"}},
		{"the middle one last", []string{"a", "b", "c"}, []string{"b"}, []string{"c", "a", "b"}},
		{"the most recent goodbye last", []string{"a", "b", "c"}, []string{"c", "a"}, []string{"b", "c", "a"}},
		{"all avoided: in avoid's order", []string{"a", "b"}, []string{"b", "a"}, []string{"b", "a"}},
		{"an unknown avoided address is dropped", []string{"a", "b"}, []string{"x", "a"}, []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addrs := slices.Clone(tt.addrs)
			if got := replicaOrder(addrs, tt.avoid, reverse); !slices.Equal(got, tt.want) {
				t.Errorf("replicaOrder(%v, %v) = %v; want %v", tt.addrs, tt.avoid, got, tt.want)
			}
			if !slices.Equal(addrs, tt.addrs) {
				t.Errorf("replicaOrder changed its addrs to %v", addrs)
			}
		})
	}
}

func TestAddrOf(t *testing.T) {
	lookup := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		switch host {
		case "hub-0.hub":
			return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
		case "hub-1.hub":
			return []netip.Addr{netip.MustParseAddr("10.0.0.9"), netip.MustParseAddr("10.0.0.2")}, nil
		}
		return nil, errors.New("no such host")
	}
	tests := []struct {
		name  string
		addrs []string
		peer  string
		want  string
	}{
		{"an IP", []string{"127.0.0.1:7443", "127.0.0.2:7443"}, "127.0.0.2:7443", "127.0.0.2:7443"},
		{"the port tells apart one host", []string{"127.0.0.1:7443", "127.0.0.1:7444"}, "127.0.0.1:7444", "127.0.0.1:7444"},
		{"IPv6", []string{"[::1]:7443", "127.0.0.1:7443"}, "[::1]:7443", "[::1]:7443"},
		{"an IPv4-mapped peer", []string{"127.0.0.1:7443"}, "[::ffff:127.0.0.1]:7443", "127.0.0.1:7443"},
		{"a name, looked up", []string{"hub-0.hub:7443", "hub-1.hub:7443"}, "10.0.0.2:7443", "hub-1.hub:7443"},
		{"a name on another port", []string{"hub-1.hub:7444"}, "10.0.0.2:7443", ""},
		{"a name that does not resolve", []string{"gone.hub:7443"}, "10.0.0.2:7443", ""},
		{"none: a proxy in between", []string{"127.0.0.1:7443", "hub-0.hub:7443"}, "192.168.1.1:3128", ""},
		{"an unknown peer", []string{"127.0.0.1:7443"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := addrOf(context.Background(), tt.addrs, tt.peer, lookup); got != tt.want {
				t.Errorf("addrOf(%v, %q) = %q; want %q", tt.addrs, tt.peer, got, tt.want)
			}
		})
	}
}
