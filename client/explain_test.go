package client

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestExplain: each status code gets its advice, the code stays readable,
// and errors without a status pass unchanged.
func TestExplain(t *testing.T) {
	cfg := Config{Address: "hub:7443", User: "victor"}
	cases := map[string]struct {
		err  error
		want string
	}{
		"unreachable":   {status.Error(codes.Unavailable, "connection refused"), "hub at hub:7443 unreachable: is tether-hub running?"},
		"other CA":      {status.Error(codes.Unavailable, "tls: handshake failure"), "the config's CA or certificate is not this hub's"},
		"role":          {status.Error(codes.PermissionDenied, "clientapi: needs admin"), `permission denied for user "victor": ask an admin for a config with the needed role (needs admin)`},
		"compacted":     {status.Error(codes.OutOfRange, "revision 3 compacted"), "history compacted: start again without a revision"},
		"hub's message": {status.Error(codes.NotFound, "clientapi: ConfigMap default/x not found"), "ConfigMap default/x not found"},
		"older hub":     {status.Error(codes.Unimplemented, "unknown method"), "the hub at hub:7443 does not serve this"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := cfg.Explain(tc.err)
			if !strings.Contains(got.Error(), tc.want) {
				t.Errorf("Explain(%v) = %q; want it to contain %q", tc.err, got, tc.want)
			}
			if status.Code(got) != status.Code(tc.err) {
				t.Errorf("status.Code(Explain(%v)) = %v; want %v", tc.err, status.Code(got), status.Code(tc.err))
			}
			if again := cfg.Explain(got); again != got {
				t.Errorf("Explain of an explained error = %q; want it unchanged", again)
			}
		})
	}
	plain := errors.New("plain")
	if got := cfg.Explain(plain); got != plain {
		t.Errorf("Explain(plain error) = %v; want it unchanged", got)
	}
	if got := cfg.Explain(nil); got != nil {
		t.Errorf("Explain(nil) = %v; want nil", got)
	}
}

// TestConfigAddresses: Address is one address or a list; a ServerName goes
// only with one.
func TestConfigAddresses(t *testing.T) {
	cases := map[string]struct {
		cfg     Config
		want    int
		wantErr string
	}{
		"one":                   {Config{Address: "hub:7443"}, 1, ""},
		"replicas":              {Config{Address: "a:7443, b:7443"}, 2, ""},
		"none":                  {Config{}, 0, "address: required"},
		"no port":               {Config{Address: "hub"}, 0, "want host:port"},
		"server name with many": {Config{Address: "a:1,b:1", ServerName: "hub"}, 0, "only with a single address"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			addrs, err := tc.cfg.addrs()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("addrs(%q) = %v, %v; want an error containing %q", tc.cfg.Address, addrs, err, tc.wantErr)
				}
				return
			}
			if err != nil || len(addrs) != tc.want {
				t.Fatalf("addrs(%q) = %v, %v; want %d addresses", tc.cfg.Address, addrs, err, tc.want)
			}
		})
	}
}
