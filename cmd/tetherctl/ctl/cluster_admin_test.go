package ctl_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/revocation"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/certs"
)

// adminHub is the client API with a registry of tokens and agents and the
// user revocations, as the hub serves it, over real gRPC, TLS and etcd.
type adminHub struct {
	*onlineHub
	reg *membership.Registry
}

func startAdminHub(t *testing.T) *adminHub {
	t.Helper()
	h := &adminHub{onlineHub: newOnlineHub(t)}
	h.reg = membership.NewRegistry(h.st, h.ca, membership.Config{}, hclog.NewNullLogger())
	v, err := view.New(h.st, []view.Prefix{revocation.Prefix(), roles.Prefix()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	revoked, book := revocation.New(h.st, v, hclog.NewNullLogger()), roles.New(h.st, v, hclog.NewNullLogger())
	runCtx, stop := context.WithCancel(context.Background())
	followed := make(chan error, 3)
	go func() { followed <- v.Run(runCtx) }()
	go func() { followed <- revoked.Run(runCtx) }()
	go func() { followed <- book.Run(runCtx) }()
	t.Cleanup(func() { // after the server stops, before the store closes
		stop()
		<-followed
		<-followed
		<-followed
	})
	h.serve(t, clientapi.Config{Registry: h.reg, Revocations: revoked, Roles: book}, clientapi.RefuseRevoked(revoked)...)
	return h
}

// pendingKey registers cluster with one key, then with another, and
// returns the second's fingerprint, now pending.
func (h *adminHub) pendingKey(t *testing.T, cluster string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tok, _, err := h.reg.CreateToken(ctx, membership.TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var fp string
	for i := range 2 {
		csrPEM, _, err := certs.NewCSR(cluster)
		if err != nil {
			t.Fatal(err)
		}
		csr, err := certs.ParseCSR(csrPEM)
		if err != nil {
			t.Fatal(err)
		}
		fp = membership.Fingerprint(csr.RawSubjectPublicKeyInfo)
		_, err = h.reg.Register(ctx, membership.Request{Token: tok, Cluster: cluster, CSRPEM: csrPEM})
		if want := i == 1; errors.Is(err, membership.ErrPendingApproval) != want {
			t.Fatalf("Register(%s, key %d) = %v; want pending: %t", cluster, i+1, err, want)
		}
	}
	return fp
}

// TestClusterApproveNeedsTheFingerprint: cluster approve without
// --key-fingerprint, or with something that is not one, is refused naming
// the form; cluster pending shows the fingerprint to pass; a wrong key is
// refused by the hub, the pending one approved; reject discards one.
func TestClusterApproveNeedsTheFingerprint(t *testing.T) {
	h := startAdminHub(t)
	fp := h.pendingKey(t, "edge-1")
	for _, args := range [][]string{
		{"cluster", "approve", "edge-1"},
		{"cluster", "approve", "edge-1", "--key-fingerprint", "sha256:00"},
		{"cluster", "reject", "edge-1"},
	} {
		code, _, errOut := runWith(t, h.admin, "", args...)
		if code == 0 || !strings.Contains(errOut, "--key-fingerprint") || !strings.Contains(errOut, "sha256:<64") {
			t.Errorf("tetherctl %s = %d, %q; want refused naming --key-fingerprint and the form sha256:<64 hex digits>", strings.Join(args, " "), code, errOut)
		}
	}
	if out := mustRun(t, h.admin, "cluster", "pending"); !strings.Contains(out, "edge-1") || !strings.Contains(out, fp) {
		t.Errorf("cluster pending = %q; want edge-1 with %s", out, fp)
	}
	if out := mustRun(t, h.admin, "describe", "cluster", "edge-1"); !strings.Contains(out, "--key-fingerprint "+fp) {
		t.Errorf("describe cluster edge-1 = %q; want the approve command with --key-fingerprint %s", out, fp)
	}
	other := "sha256:" + strings.Repeat("0", 64)
	if code, _, errOut := runWith(t, h.admin, "", "cluster", "approve", "edge-1", "--key-fingerprint", other); code == 0 || !strings.Contains(errOut, fp) {
		t.Errorf("cluster approve with another key = %d, %q; want refused naming the pending %s", code, errOut, fp)
	}
	if code, _, errOut := runWith(t, h.viewer, "", "cluster", "approve", "edge-1", "--key-fingerprint", fp); code == 0 || !strings.Contains(errOut, "permission denied") {
		t.Errorf("cluster approve as a viewer = %d, %q; want permission denied", code, errOut)
	}
	mustRun(t, h.admin, "cluster", "approve", "edge-1", "--key-fingerprint", fp)
	if code, _, errOut := runWith(t, h.admin, "", "cluster", "pending"); code != 0 || !strings.Contains(errOut, "No keys awaiting approval") {
		t.Errorf("cluster pending after the approval = %d, %q; want none", code, errOut)
	}

	rejected := h.pendingKey(t, "edge-2")
	mustRun(t, h.admin, "cluster", "reject", "edge-2", "--key-fingerprint", rejected)
	if out := mustRun(t, h.admin, "clusters", "edge-2", "-o", "json"); strings.Contains(out, rejected) {
		t.Errorf("clusters edge-2 after reject = %q; want no pending key", out)
	}
}

// TestUserRevoke: an admin revokes a user with tetherctl; the user's
// next command is refused naming the revocation, user revoked lists it,
// and an admin cannot revoke themselves.
func TestUserRevoke(t *testing.T) {
	h := startAdminHub(t)
	mustRun(t, h.viewer, "clusters")
	if out := mustRun(t, h.admin, "user", "revoke", "victor"); !strings.Contains(out, "user/victor revoked") {
		t.Errorf("user revoke victor = %q; want it confirmed", out)
	}
	if code, _, errOut := runWith(t, h.viewer, "", "clusters"); code == 0 || !strings.Contains(errOut, `user "victor" was revoked`) {
		t.Errorf("clusters as the revoked victor = %d, %q; want refused naming the revocation", code, errOut)
	}
	if code, _, errOut := runWith(t, h.viewer, "", "user", "revoke", "alice"); code == 0 || !strings.Contains(errOut, "revoked") {
		t.Errorf("user revoke as the revoked viewer = %d, %q; want refused", code, errOut)
	}
	if code, _, errOut := runWith(t, h.admin, "", "user", "revoke", "alice"); code == 0 || !strings.Contains(errOut, "yourself") {
		t.Errorf("user revoke alice as alice = %d, %q; want refused", code, errOut)
	}
	if out := mustRun(t, h.admin, "user", "revoked"); !strings.Contains(out, "victor") || !strings.Contains(out, "alice") {
		t.Errorf("user revoked = %q; want victor, revoked by alice", out)
	}
	mustRun(t, h.admin, "clusters")
}
