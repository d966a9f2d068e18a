package membership

import (
	"errors"
	"strings"
	"testing"

	"github.com/tetherproj/tether/internal/certs"
)

// TestPendingKeyIsNeverReplaced: while a cluster has a key awaiting
// approval, a registration with yet another key (any holder of an unused
// token) is refused naming the cluster and leaves the pending key as it
// was; once an admin rejects it, another key may be recorded.
func TestPendingKeyIsNeverReplaced(t *testing.T) {
	r, _, _ := newRegistry(t)
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)}); err != nil {
		t.Fatal(err)
	}
	reinstalled, squatter := csr(t), csr(t)
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: reinstalled}); !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Register(new key) = %v; want ErrPendingApproval", err)
	}
	want := keyOf(t, reinstalled)
	_, err = r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: squatter})
	if !errors.Is(err, ErrPendingApproval) || !strings.Contains(err.Error(), `cluster "edge-1" already has a key awaiting approval (`+want+`)`) {
		t.Fatalf("Register(a third key while one is pending) = %v; want a refusal naming edge-1 and its pending key %s", err, want)
	}
	if a, err := r.Agent(ctx, "edge-1"); err != nil || a.PendingKeyFingerprint != want {
		t.Fatalf("pending key after the refused registration = %q, %v; want %s unchanged", a.PendingKeyFingerprint, err, want)
	}
	if _, err := r.Reject(ctx, "edge-1", keyOf(t, squatter)); !errors.Is(err, ErrNoPending) {
		t.Errorf("Reject(a key that is not pending) = %v; want ErrNoPending", err)
	}
	if _, err := r.Reject(ctx, "edge-1", want); err != nil {
		t.Fatalf("Reject(pending key) = %v", err)
	}
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: squatter}); !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Register(new key) after the rejection = %v; want ErrPendingApproval", err)
	}
	if a, err := r.Agent(ctx, "edge-1"); err != nil || a.PendingKeyFingerprint != keyOf(t, squatter) {
		t.Errorf("pending key after the rejection and a new registration = %q, %v; want %s", a.PendingKeyFingerprint, err, keyOf(t, squatter))
	}
}

// TestApproveNeedsTheFingerprint: approving (or rejecting) without the
// pending key's fingerprint, or with something that is not one, is
// refused naming the form; a well-formed other key is ErrNoPending.
func TestApproveNeedsTheFingerprint(t *testing.T) {
	r, _, _ := newRegistry(t)
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)}); !errors.Is(err, ErrPendingApproval) {
		t.Fatalf("Register(new key) = %v; want ErrPendingApproval", err)
	}
	for _, fp := range []string{"", "sha256:00", "SHA256:" + strings.Repeat("A", 64), strings.Repeat("a", 64)} {
		if _, err := r.Approve(ctx, "edge-1", fp); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "sha256:<64 lowercase hex digits>") {
			t.Errorf("Approve(%q) = %v; want ErrInvalid naming the form sha256:<64 lowercase hex digits>", fp, err)
		}
		if _, err := r.Reject(ctx, "edge-1", fp); !errors.Is(err, ErrInvalid) {
			t.Errorf("Reject(%q) = %v; want ErrInvalid", fp, err)
		}
	}
	if _, err := r.Approve(ctx, "edge-1", Fingerprint([]byte("another key"))); !errors.Is(err, ErrNoPending) {
		t.Errorf("Approve(another key) = %v; want ErrNoPending", err)
	}
	if a, err := r.Agent(ctx, "edge-1"); err != nil || a.PendingKeyFingerprint == "" {
		t.Errorf("binding after refused approvals = %+v, %v; want the key still pending", a, err)
	}
}

// keyOf returns the fingerprint of csrPEM's key.
func keyOf(t *testing.T, csrPEM []byte) string {
	t.Helper()
	c, err := certs.ParseCSR(csrPEM)
	if err != nil {
		t.Fatal(err)
	}
	return Fingerprint(c.RawSubjectPublicKeyInfo)
}
