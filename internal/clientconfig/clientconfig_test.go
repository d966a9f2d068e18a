package clientconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tetherproj/tether/internal/certs"
)

// selfSigned returns a PEM CA, certificate and key good enough for TLS().
func selfSigned(t *testing.T) (caPEM, certPEM, keyPEM string) {
	t.Helper()
	data, err := os.ReadFile("testdata/client.pem")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitAfter(string(data), "-----END CERTIFICATE-----\n")
	if _, err := certs.ParseCertificate([]byte(parts[0])); err != nil {
		t.Fatal(err)
	}
	return parts[0], parts[0], parts[1]
}

func TestWriteLoadRoundTrip(t *testing.T) {
	ca, cert, key := selfSigned(t)
	path := filepath.Join(t.TempDir(), "sub", "admin.conf")
	in := &Config{Server: "127.0.0.1:7443", User: "admin", CertificateAuthority: ca, ClientCertificate: cert, ClientKey: key}
	if err := in.Write(path); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v; want 0600", info.Mode().Perm())
	}
	out, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("Load(Write(c)) (-want +got):\n%s", diff)
	}
}

func TestLoadErrorsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	ca, cert, _ := selfSigned(t)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	head := "apiVersion: tether.io/v1\nkind: Config\n"
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "pass --config FILE or set $TETHER_CONFIG"},
		{write("unknown", head+"server: x\nsevrer: y\n"), `unknown field "sevrer"`},
		{write("noserver", head+"certificateAuthority: x\n"), "server: required"},
		{write("kind", "apiVersion: v1\nkind: Pod\n"), "apiVersion/kind"},
		{write("badca", head+"server: h:1\ncertificateAuthority: nope\nclientCertificate: a\nclientKey: b\n"), "certificateAuthority: no PEM"},
		{write("badkey", head+"server: h:1\ncertificateAuthority: |\n  "+strings.ReplaceAll(ca, "\n", "\n  ")+"\nclientCertificate: |\n  "+strings.ReplaceAll(cert, "\n", "\n  ")+"\nclientKey: x\n"), "clientCertificate/clientKey"},
	} {
		_, err := Load(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s) = %v; want an error containing %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}

func TestPathOrder(t *testing.T) {
	t.Setenv(EnvVar, "/from/env")
	if p, _ := Path("/from/flag"); p != "/from/flag" {
		t.Errorf("Path(flag) = %s; want the flag", p)
	}
	if p, _ := Path(""); p != "/from/env" {
		t.Errorf("Path(\"\") with $%s = %s; want /from/env", EnvVar, p)
	}
	t.Setenv(EnvVar, "")
	t.Setenv("HOME", "/home/u")
	if p, _ := Path(""); p != "/home/u/.tether/config" {
		t.Errorf("Path(\"\") = %s; want ~/.tether/config", p)
	}
}

func TestCheckExpiry(t *testing.T) {
	ca, cert, key := selfSigned(t)
	c := &Config{Server: "h:1", User: "alice", CertificateAuthority: ca, ClientCertificate: cert, ClientKey: key}
	leaf, err := certs.ParseCertificate([]byte(cert))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		want string // in the error; empty: none
	}{
		{"valid", leaf.NotBefore.Add(time.Second), ""},
		{"expired", leaf.NotAfter.Add(time.Second), "expired at"},
		{"not yet valid", leaf.NotBefore.Add(-time.Second), "is this machine's clock right"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckExpiry(tc.at)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("CheckExpiry(%s) = %v; want %q", tc.at, err, tc.want)
			}
		})
	}
}
