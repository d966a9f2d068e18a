package membership

import (
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/tetherproj/tether/internal/certs"
)

func TestRenew(t *testing.T) {
	now := time.Now()
	cur := &x509.Certificate{RawSubjectPublicKeyInfo: []byte("key-cur"), NotAfter: now.Add(time.Minute)}
	prev := &x509.Certificate{RawSubjectPublicKeyInfo: []byte("key-prev"), NotAfter: now.Add(time.Minute)}
	fpCur, fpPrev := Fingerprint(cur.RawSubjectPublicKeyInfo), Fingerprint(prev.RawSubjectPublicKeyInfo)
	removed := now
	notAfter := now.Add(time.Hour)
	tests := []struct {
		name     string
		rec      *Agent
		cert     *x509.Certificate
		fp       string
		err      error
		wantPrev string // the previous key after the renewal
	}{
		{"bound key renews", &Agent{Cluster: "c", KeyFingerprint: fpCur}, cur, "new", nil, fpCur},
		{"minted (no record) renews and binds", nil, cur, "new", nil, fpCur},
		{"lost answer: old key asks again for the bound key", &Agent{Cluster: "c", KeyFingerprint: "new", PreviousKeyFingerprint: fpPrev, PreviousNotAfter: prev.NotAfter}, prev, "new", nil, fpPrev},
		{"lost answer and key: old key asks for a third", &Agent{Cluster: "c", KeyFingerprint: "lost", PreviousKeyFingerprint: fpPrev, PreviousNotAfter: prev.NotAfter}, prev, "new", nil, fpPrev},
		{"old key after its grace", &Agent{Cluster: "c", KeyFingerprint: "new", PreviousKeyFingerprint: fpPrev, PreviousNotAfter: now}, prev, "newer", ErrRevoked, ""},
		{"replaced key", &Agent{Cluster: "c", KeyFingerprint: "other"}, cur, "new", ErrRevoked, ""},
		{"removed cluster", &Agent{Cluster: "c", KeyFingerprint: fpCur, Removed: &removed}, cur, "new", ErrRevoked, ""},
		{"same key again", &Agent{Cluster: "c", KeyFingerprint: fpCur}, cur, fpCur, ErrInvalid, ""},
		{"back to the previous key", &Agent{Cluster: "c", KeyFingerprint: fpCur, PreviousKeyFingerprint: fpPrev, PreviousNotAfter: now}, cur, fpPrev, ErrInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := renew(tt.rec, "c", tt.cert, tt.fp, notAfter, now)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("renew = %+v, %v; want %v", got, err, tt.err)
				}
				return
			}
			if err != nil || got.KeyFingerprint != tt.fp || !got.NotAfter.Equal(notAfter) ||
				got.PreviousKeyFingerprint != tt.wantPrev || !got.PreviousNotAfter.Equal(tt.cert.NotAfter) || got.Cluster != "c" {
				t.Errorf("renew = %+v, %v; want key %s until %s, previous %s until %s", got, err, tt.fp, notAfter, tt.wantPrev, tt.cert.NotAfter)
			}
			if err := authorize(&got, tt.cert, now); err != nil {
				t.Errorf("authorize(asking certificate) after renew = %v; want it accepted until it expires", err)
			}
			if err := authorize(&got, tt.cert, tt.cert.NotAfter); !errors.Is(err, ErrRevoked) {
				t.Errorf("authorize(asking certificate) at its expiry = %v; want ErrRevoked", err)
			}
		})
	}
}

// TestRenewKeepsTheOldKeyUntilItExpires: a renewal binds the new key,
// accepts the old certificate until its NotAfter and refuses it after;
// approving a replacement key ends the grace at once.
func TestRenewKeepsTheOldKeyUntilItExpires(t *testing.T) {
	r, clk, _ := newRegistry(t)
	r.cfg.AgentCertLifetime = time.Minute
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)})
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(45 * time.Second)
	if _, err := r.Renew(ctx, Renewal{Cluster: "edge-1", Cert: first.Cert, CSRPEM: []byte("nope")}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Renew(garbage CSR) = %v; want ErrInvalid", err)
	}
	renewed, err := r.Renew(ctx, Renewal{Cluster: "edge-1", Cert: first.Cert, CSRPEM: csr(t)})
	if err != nil {
		t.Fatalf("Renew: %v", err)
	}
	if renewed.Cert.Subject.CommonName != first.Cert.Subject.CommonName || renewed.KeyFingerprint == first.KeyFingerprint ||
		renewed.Cert.SerialNumber.Cmp(first.Cert.SerialNumber) == 0 {
		t.Errorf("renewed certificate %s (key %s); want edge-1 with a new key and serial", renewed.Cert.Subject, renewed.KeyFingerprint)
	}
	for _, c := range []*x509.Certificate{first.Cert, renewed.Cert} {
		if err := r.Authorize(ctx, "edge-1", c); err != nil {
			t.Errorf("Authorize(serial %s) right after the renewal = %v; want both accepted", c.SerialNumber, err)
		}
	}
	clk.advance(first.Cert.NotAfter.Sub(clk.Now()))
	if err := r.Authorize(ctx, "edge-1", first.Cert); !errors.Is(err, ErrRevoked) {
		t.Errorf("Authorize(old certificate) at its expiry = %v; want ErrRevoked", err)
	}
	if err := r.Authorize(ctx, "edge-1", renewed.Cert); err != nil {
		t.Errorf("Authorize(renewed certificate) = %v; want nil", err)
	}
	if _, err := r.Renew(ctx, Renewal{Cluster: "edge-1", Cert: first.Cert, CSRPEM: csr(t)}); !errors.Is(err, ErrRevoked) {
		t.Errorf("Renew with the expired old certificate = %v; want ErrRevoked", err)
	}

	again, err := r.Renew(ctx, Renewal{Cluster: "edge-1", Cert: renewed.Cert, CSRPEM: csr(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)}); !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Register(new key) = %v; want ErrPendingApproval", err)
	}
	pending, err := r.Agent(ctx, "edge-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Approve(ctx, "edge-1", pending.PendingKeyFingerprint); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*x509.Certificate{renewed.Cert, again.Cert} {
		if err := r.Authorize(ctx, "edge-1", c); !errors.Is(err, ErrRevoked) {
			t.Errorf("Authorize(serial %s) after an approved replacement = %v; want ErrRevoked", c.SerialNumber, err)
		}
	}
	if _, err := certs.ParseCertificate(again.CertPEM); err != nil {
		t.Errorf("renewed CertPEM: %v", err)
	}
}
