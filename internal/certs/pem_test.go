package certs

import (
	"bytes"
	"strings"
	"testing"
)

func TestParsersRefuseBadInput(t *testing.T) {
	csr, key, err := NewCSR("edge-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseCSR(csr); err != nil {
		t.Errorf("ParseCSR(NewCSR) = %v; want ok", err)
	}
	if _, err := ParsePrivateKey(key); err != nil {
		t.Errorf("ParsePrivateKey(NewCSR key) = %v; want ok", err)
	}
	huge := append([]byte("-----BEGIN CERTIFICATE-----\n"), bytes.Repeat([]byte("A"), maxPEMBytes)...)
	for name, tc := range map[string]struct {
		parse func([]byte) error
		in    []byte
		want  string
	}{
		"cert garbage":  {func(b []byte) error { _, e := ParseCertificate(b); return e }, []byte("nope"), "no PEM CERTIFICATE"},
		"cert is a csr": {func(b []byte) error { _, e := ParseCertificate(b); return e }, csr, `want "CERTIFICATE"`},
		"cert huge":     {func(b []byte) error { _, e := ParseCertificate(b); return e }, huge, "over the"},
		"csr is a key":  {func(b []byte) error { _, e := ParseCSR(b); return e }, key, `want "CERTIFICATE REQUEST"`},
		"key garbage":   {func(b []byte) error { _, e := ParsePrivateKey(b); return e }, []byte("x"), "no PEM private key"},
		"key is a csr":  {func(b []byte) error { _, e := ParsePrivateKey(b); return e }, csr, "not a private key"},
	} {
		if err := tc.parse(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v; want one containing %q", name, err, tc.want)
		}
	}
}
