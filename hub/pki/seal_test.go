package pki

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func randomKey(t *testing.T) []byte {
	t.Helper()
	key := make([]byte, EncryptionKeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return key
}

func TestSealedCAOpensOnlyWithItsKey(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	key := randomKey(t)
	data, err := ca.Seal(key)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("PRIVATE KEY")) {
		t.Fatal("sealed CA holds the key in the clear")
	}
	opened, err := OpenSealed(data, key)
	if err != nil {
		t.Fatalf("OpenSealed with the sealing key: %v", err)
	}
	if opened.Hash() != ca.Hash() {
		t.Errorf("opened CA hash = %s; want %s", opened.Hash(), ca.Hash())
	}
	// The opened CA signs: a certificate it issues crosses a handshake
	// against the original.
	issued, err := opened.IssueClient(Identity{Name: "edge-1", Kind: KindAgent}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := handshake(t, ca, ca, issued); err != nil || id.Name != "edge-1" {
		t.Errorf("certificate of the opened CA over TLS = %+v, %v; want edge-1", id, err)
	}

	if _, err := OpenSealed(data, randomKey(t)); err == nil {
		t.Error("OpenSealed with another key succeeded; want an error")
	}
	other, _ := NewCA()
	var s sealed
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	s.CertPEM = string(other.CertPEM) // the key sealed under another certificate
	swapped, _ := json.Marshal(s)
	if _, err := OpenSealed(swapped, key); err == nil {
		t.Error("OpenSealed of a key with a swapped certificate succeeded; want an error")
	}
}

func TestReadEncryptionKey(t *testing.T) {
	dir := t.TempDir()
	key := randomKey(t)
	for name, tc := range map[string]struct {
		content string
		ok      bool
	}{
		"base64 with newline": {base64.StdEncoding.EncodeToString(key) + "\n", true},
		"raw bytes":           {string(key), false},
		"too short":           {base64.StdEncoding.EncodeToString(key[:16]), false},
		"empty":               {"", false},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadEncryptionKey(path)
			if tc.ok && (err != nil || !bytes.Equal(got, key)) {
				t.Errorf("ReadEncryptionKey = %x, %v; want %x", got, err, key)
			}
			if !tc.ok && err == nil {
				t.Errorf("ReadEncryptionKey(%q) succeeded; want an error", tc.content)
			}
		})
	}
}

func TestLoadCARefusesAKeyOfAnotherCertificate(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	a, err := LoadOrCreateCA(dirA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateCA(dirB); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCA(filepath.Join(dirA, caCertFile), filepath.Join(dirA, caKeyFile))
	if err != nil || got.Hash() != a.Hash() {
		t.Fatalf("LoadCA = %v, %v; want the CA of %s", got, err, dirA)
	}
	if _, err := LoadCA(filepath.Join(dirA, caCertFile), filepath.Join(dirB, caKeyFile)); err == nil {
		t.Error("LoadCA with the key of another CA succeeded; want an error")
	}
	if !HasCA(dirA) || HasCA(t.TempDir()) {
		t.Error("HasCA does not tell a directory with a CA from an empty one")
	}
}
