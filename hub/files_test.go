package hub

import (
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
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

func TestServingCertificateCarriesExtraSANs(t *testing.T) {
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{DataDir: t.TempDir(), Listen: "127.0.0.1:7443", TLSSANs: []string{"hub.example.com", "203.0.113.7"}}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := h.servingCert(ca, "127.0.0.1:7443")
	if err != nil {
		t.Fatal(err)
	}
	leaf := cert.Leaf()
	if life := time.Until(leaf.NotAfter); life > DefaultServingCertLifetime || life < DefaultServingCertLifetime-time.Minute {
		t.Errorf("serving certificate valid for %s more; want the default lifetime, %s", life.Round(time.Second), DefaultServingCertLifetime)
	}
	if err := leaf.VerifyHostname("hub.example.com"); err != nil {
		t.Errorf("serving certificate for --tls-san hub.example.com: %v", err)
	}
	if err := leaf.VerifyHostname("203.0.113.7"); err != nil {
		t.Errorf("serving certificate for --tls-san 203.0.113.7: %v", err)
	}
	if err := leaf.VerifyHostname("other.example.com"); err == nil {
		t.Error("serving certificate also valid for other.example.com; want only the names given")
	}
}
