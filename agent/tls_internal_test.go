package agent

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetherproj/tether/internal/certs"
	"github.com/tetherproj/tether/internal/durable"
)

// testCA signs client certificates for the renewal tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) sign(t *testing.T, pub crypto.PublicKey, serial int64) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "edge-1"},
		NotBefore: time.Now().Add(-5 * time.Minute), NotAfter: time.Now().Add(time.Minute),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return certs.EncodeCertificate(der)
}

// newFiles writes a key and its certificate (serial 1) into a directory.
func newFiles(t *testing.T, ca *testCA) *certFiles {
	t.Helper()
	dir := t.TempDir()
	f := &certFiles{certFile: filepath.Join(dir, CertFileName), keyFile: filepath.Join(dir, KeyFileName)}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	keyPEM, _ := certs.EncodePrivateKey(key)
	if err := os.WriteFile(f.keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.certFile, ca.sign(t, key.Public(), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// answer signs the pending key's CSR as the hub would.
func answer(t *testing.T, ca *testCA, csrPEM []byte, serial int64) []byte {
	t.Helper()
	csr, err := certs.ParseCSR(csrPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca.sign(t, csr.PublicKey, serial)
}

func serial(t *testing.T, f *certFiles) int64 {
	t.Helper()
	pair, err := f.clientCert()
	if err != nil {
		t.Fatalf("the installed pair: %v", err)
	}
	return pair.Leaf.SerialNumber.Int64()
}

// TestRenewalInstallsANewKey: Request keeps the pending key (0600) and
// asks again with it until Renewed; Renewed refuses a certificate for
// another key and installs the pair, which the next handshake reads.
func TestRenewalInstallsANewKey(t *testing.T) {
	ca := newTestCA(t)
	f := newFiles(t, ca)
	cert, issued, err := f.Certificate()
	if err != nil || cert.SerialNumber.Int64() != 1 || issued.Before(cert.NotBefore.Add(5*time.Minute-time.Second)) {
		t.Fatalf("Certificate() = serial %v, got at %s (not before %s), %v; want serial 1 got when written", cert.SerialNumber, issued, cert.NotBefore, err)
	}
	oldKey, _ := os.ReadFile(f.keyFile)
	csr1, err := f.Request()
	if err != nil {
		t.Fatal(err)
	}
	csr2, _ := f.Request()
	if c1, c2 := mustCSR(t, csr1), mustCSR(t, csr2); !c1.PublicKey.(*ecdsa.PublicKey).Equal(c2.PublicKey) {
		t.Errorf("a second Request without an answer asked for another key; want the pending one again")
	}
	if info, err := os.Stat(f.keyFile + nextSuffix); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("pending key file: %v; want mode 0600", err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err := f.Renewed(ca.sign(t, other.Public(), 9)); err == nil {
		t.Errorf("Renewed(certificate for another key) = nil; want refused")
	}
	if serial(t, f) != 1 {
		t.Errorf("a refused certificate replaced the pair")
	}
	if err := f.Renewed(answer(t, ca, csr1, 2)); err != nil {
		t.Fatalf("Renewed: %v", err)
	}
	newKey, _ := os.ReadFile(f.keyFile)
	if serial(t, f) != 2 || string(newKey) == string(oldKey) {
		t.Errorf("after Renewed: serial %d, key changed %v; want serial 2 with the new key", serial(t, f), string(newKey) != string(oldKey))
	}
	for _, p := range []string{f.keyFile + nextSuffix, f.certFile + nextSuffix} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s after Renewed: %v; want it gone", p, err)
		}
	}
	if _, issued, _ := f.Certificate(); time.Since(issued) > time.Minute {
		t.Errorf("renewed certificate got at %s; want now", issued)
	}
}

func mustCSR(t *testing.T, data []byte) *x509.CertificateRequest {
	t.Helper()
	csr, err := certs.ParseCSR(data)
	if err != nil {
		t.Fatal(err)
	}
	return csr
}

// TestFinishRenewal: a renewal a crash interrupted is finished, or its
// stray certificate dropped; the pair is always usable after.
func TestFinishRenewal(t *testing.T) {
	ca := newTestCA(t)
	tests := []struct {
		name   string
		crash  func(t *testing.T, f *certFiles, certPEM []byte)
		serial int64
	}{
		{"before CERT.next", func(t *testing.T, f *certFiles, _ []byte) {}, 1},
		{"after CERT.next", func(t *testing.T, f *certFiles, certPEM []byte) {
			must(t, os.WriteFile(f.certFile+nextSuffix, certPEM, 0o644))
		}, 2},
		{"after the key's rename", func(t *testing.T, f *certFiles, certPEM []byte) {
			must(t, os.WriteFile(f.certFile+nextSuffix, certPEM, 0o644))
			must(t, os.Rename(f.keyFile+nextSuffix, f.keyFile))
		}, 2},
		{"a stray certificate", func(t *testing.T, f *certFiles, _ []byte) {
			other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			must(t, os.WriteFile(f.certFile+nextSuffix, ca.sign(t, other.Public(), 7), 0o644))
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFiles(t, ca)
			csr, err := f.Request()
			if err != nil {
				t.Fatal(err)
			}
			tt.crash(t, f, answer(t, ca, csr, 2))
			if err := finishRenewal(f.certFile, f.keyFile); err != nil {
				t.Fatalf("finishRenewal: %v", err)
			}
			if got := serial(t, f); got != tt.serial {
				t.Errorf("serial after finishRenewal = %d; want %d", got, tt.serial)
			}
			if _, err := os.Stat(f.certFile + nextSuffix); !os.IsNotExist(err) {
				t.Errorf("CERT.next after finishRenewal: %v; want it gone", err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCredentialWritesSyncTheirDirectory: a renewal's files are renamed
// into place and their directory synced, so that they survive a power
// loss (every credential file itself is written by durable.WriteFile,
// which internal/durable tests).
func TestCredentialWritesSyncTheirDirectory(t *testing.T) {
	var synced []string
	syncDirs = func(dirs ...string) error {
		synced = append(synced, dirs...)
		return syncDir(dirs...)
	}
	t.Cleanup(func() { syncDirs = syncDir })
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	must(t, durable.WriteFile(keyFile+nextSuffix, []byte("secret"), 0o600))
	must(t, durable.WriteFile(certFile+nextSuffix, []byte("cert"), 0o644))
	must(t, commitRenewal(certFile, keyFile))
	if len(synced) != 1 || synced[0] != dir {
		t.Errorf("directories synced by commitRenewal = %v; want [%s]", synced, dir)
	}
	for path, want := range map[string]string{keyFile: "secret", certFile: "cert"} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if info, err := os.Stat(keyFile); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("Stat(%s) = %v, %v; want mode 0600", keyFile, info, err)
	}
}
