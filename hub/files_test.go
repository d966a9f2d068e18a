package hub

import (
	"slices"
	"testing"
)

func TestDialAddr(t *testing.T) {
	for _, tc := range []struct{ listen, want string }{
		{"0.0.0.0:7443", "127.0.0.1:7443"},
		{"[::]:7443", "127.0.0.1:7443"},
		{":7443", "127.0.0.1:7443"},
		{"10.1.2.3:7443", "10.1.2.3:7443"},
		{"hub.example.com:443", "hub.example.com:443"},
	} {
		if got := dialAddr(tc.listen); got != tc.want {
			t.Errorf("dialAddr(%s) = %s; want %s", tc.listen, got, tc.want)
		}
	}
}

func TestServingHosts(t *testing.T) {
	for _, tc := range []struct {
		listen string
		want   []string
	}{
		{"127.0.0.1:0", []string{"127.0.0.1", "::1", "localhost"}},
		{"hub.example.com:443", []string{"localhost", "hub.example.com"}},
		{"10.1.2.3:7443", []string{"127.0.0.1", "10.1.2.3"}},
	} {
		got := servingHosts(tc.listen)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("servingHosts(%s) = %v; want %s among them", tc.listen, got, w)
			}
		}
	}
}
