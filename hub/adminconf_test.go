package hub

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// writeAdminConfFile writes dir/admin.conf naming server, with a certificate
// for id valid from notBefore to notAfter, signed by the CA in caDir
// (created if missing). It returns the file's content.
func writeAdminConfFile(t *testing.T, dir, caDir string, id pki.Identity, notBefore, notAfter time.Time, server string) []byte {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(caDir)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(caDir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := certs.ParsePrivateKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: id.Name, Organization: []string{"tether:" + string(id.Kind)}},
		NotBefore:    notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	clientKey, err := certs.EncodePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := &clientconfig.Config{Server: server, User: id.Name, CertificateAuthority: string(ca.CertPEM),
		ClientCertificate: string(certs.EncodeCertificate(der)), ClientKey: string(clientKey)}
	path := filepath.Join(dir, AdminConfFile)
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	return data
}

// adminCert reads the client certificate of the config at path.
func adminCert(t *testing.T, path string) (*clientconfig.Config, *x509.Certificate) {
	t.Helper()
	c, err := clientconfig.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	leaf, err := certs.ParseCertificate([]byte(c.ClientCertificate))
	if err != nil {
		t.Fatal(err)
	}
	return c, leaf
}

// TestExpiredAdminConfRenewedAtStart: a hub started on a data directory
// whose admin.conf certificate expired an hour ago renews it, for a year,
// keeping the server the user wrote; tetherctl (in-process) with the file
// pointed at the hub lists tokens (admin only), and with the expired
// certificate is refused. Before, admin.conf was never rewritten and
// stayed unusable.
func TestExpiredAdminConfRenewedAtStart(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	path := filepath.Join(dir, AdminConfFile)
	old := writeAdminConfFile(t, dir, filepath.Join(dir, PKIDir), pki.Identity{Name: AdminUser, Kind: pki.KindAdmin},
		now.Add(-2*time.Hour), now.Add(-time.Hour), "hub.example.com:7443")
	addr := runHub(t, dir, Config{}, nil)

	c, leaf := adminCert(t, path)
	if c.Server != "hub.example.com:7443" {
		t.Errorf("renewed admin.conf names %q; want the server it had, hub.example.com:7443", c.Server)
	}
	if life := time.Until(leaf.NotAfter); life < AdminCertLifetime-time.Hour {
		t.Errorf("admin.conf's certificate valid %s more; want about %s", life.Round(time.Second), AdminCertLifetime)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("admin.conf after renewal: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	if code, errOut := tetherctl(t, c, addr, "token", "list"); code != 0 {
		t.Errorf("tetherctl token list with the renewed admin.conf = %d, %q; want 0", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "old.conf"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	expired, _ := adminCert(t, filepath.Join(dir, "old.conf"))
	if code, errOut := tetherctl(t, expired, addr, "token", "list"); code == 0 || !strings.Contains(errOut, "expired at") {
		t.Errorf("tetherctl token list with the expired certificate = %d, %q; want refused, saying it expired", code, errOut)
	}
}

// tetherctl runs tetherctl in-process with the credentials of c pointed at
// addr, and returns its exit code and stderr.
func tetherctl(t *testing.T, c *clientconfig.Config, addr string, args ...string) (int, string) {
	t.Helper()
	conf := *c
	conf.Server = addr
	path := filepath.Join(t.TempDir(), "tetherctl.conf")
	if err := conf.Write(path); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errOut bytes.Buffer
	code := ctl.Run(ctx, append([]string{"--config", path}, args...), strings.NewReader(""), io.Discard, &errOut)
	return code, errOut.String()
}

// TestAdminConfRenewal: at start (ensure) and while the hub runs (keep,
// each of whose checks is check), admin.conf's certificate is replaced
// once two thirds of its validity have passed, for the identity it had;
// one with time left, or one another CA signed, is left byte for byte.
func TestAdminConfRenewal(t *testing.T) {
	now := time.Now()
	viewer := pki.Identity{Name: "ops", Kind: pki.KindViewer}
	for _, tc := range []struct {
		name              string
		id                pki.Identity
		notBefore, expiry time.Time
		otherCA           bool
		want              bool // renewed
	}{
		{"expired", viewer, now.Add(-2 * time.Hour), now.Add(-time.Hour), false, true},
		{"a fifth left", viewer, now.Add(-4 * time.Hour), now.Add(time.Hour), false, true},
		{"half left", viewer, now.Add(-time.Hour), now.Add(time.Hour), false, false},
		{"another CA's, expired", viewer, now.Add(-2 * time.Hour), now.Add(-time.Hour), true, false},
	} {
		for _, running := range []bool{false, true} {
			name := tc.name + map[bool]string{false: " at start", true: " while running"}[running]
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				caDir := filepath.Join(dir, PKIDir)
				signer := caDir
				if tc.otherCA {
					signer = filepath.Join(dir, "other")
				}
				before := writeAdminConfFile(t, dir, signer, tc.id, tc.notBefore, tc.expiry, "10.0.0.1:7443")
				ca, err := pki.LoadOrCreateCA(caDir)
				if err != nil {
					t.Fatal(err)
				}
				a := adminConf{path: filepath.Join(dir, AdminConfFile), ca: ca, server: "127.0.0.1:7443", logger: hclog.NewNullLogger()}
				switch {
				case running && tc.want:
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan error, 1)
					go func() { done <- a.keep(10 * time.Millisecond)(ctx) }()
					defer func() { cancel(); <-done }()
					pollRenewed(t, a.path, before)
				case running:
					a.check(time.Hour)
				default:
					if err := a.ensure(); err != nil {
						t.Fatalf("ensure: %v", err)
					}
				}
				after, _ := os.ReadFile(a.path)
				if renewed := !bytes.Equal(before, after); renewed != tc.want {
					t.Fatalf("admin.conf renewed = %v; want %v", renewed, tc.want)
				}
				if !tc.want {
					return
				}
				c, leaf := adminCert(t, a.path)
				if id, err := pki.IdentityOf(leaf); err != nil || id != tc.id || c.Server != "10.0.0.1:7443" {
					t.Errorf("renewed for %v (%v), server %q; want %v, 10.0.0.1:7443", id, err, c.Server, tc.id)
				}
				if err := leaf.CheckSignatureFrom(ca.Cert); err != nil || !leaf.NotAfter.After(now.Add(AdminCertLifetime-time.Hour)) {
					t.Errorf("renewed certificate until %s (%v); want the hub CA's, for a year", leaf.NotAfter, err)
				}
			})
		}
	}
}

// pollRenewed waits until the file at path differs from before.
func pollRenewed(t *testing.T, path string, before []byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if after, err := os.ReadFile(path); err == nil && !bytes.Equal(after, before) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not renewed within 10s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
