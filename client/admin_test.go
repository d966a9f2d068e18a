package client_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/certs"
)

// putCluster stores a cluster record as registration would.
func (h *testHub) putCluster(t *testing.T, name, env string) {
	t.Helper()
	rec := `{"apiVersion": "cluster.tether.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "` + name +
		`", "labels": {"env": "` + env + `"}}, "spec": {"region": "eu"}}`
	if _, err := h.st.Put(testContext(t), store.ClusterKey(name), []byte(rec)); err != nil {
		t.Fatal(err)
	}
}

// TestClusterCalls: each cluster call changes what it names, and the
// next read shows it.
func TestClusterCalls(t *testing.T) {
	h, ctx := startHub(t), testContext(t)
	h.putCluster(t, "m1", "prod")
	h.putCluster(t, "m2", "dev")
	prod, err := h.c.ListClusters(ctx, client.ClusterSelector{LabelSelector: "env=prod"})
	if err != nil || len(prod) != 1 || prod[0].GetName() != "m1" {
		t.Fatalf("ListClusters(env=prod) = %v, %v; want m1", prod, err)
	}
	if cl, err := h.c.Cordon(ctx, "m1"); err != nil || !cl.GetCordoned() {
		t.Errorf("Cordon(m1) = %v, %v; want it cordoned", cl, err)
	}
	if cl, err := h.c.Uncordon(ctx, "m1"); err != nil || cl.GetCordoned() {
		t.Errorf("Uncordon(m1) = %v, %v; want it schedulable", cl, err)
	}
	gpu := &hubv1.Taint{Key: "gpu", Value: "yes", Effect: hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE}
	if cl, err := h.c.Taint(ctx, "m1", []*hubv1.Taint{gpu}, nil); err != nil || len(cl.GetTaints()) != 1 {
		t.Errorf("Taint(m1, +gpu) = %v, %v; want one taint", cl, err)
	}
	if cl, err := h.c.Label(ctx, "m1", client.MetaChange{Set: map[string]string{"tier": "a"}}); err != nil || cl.GetLabels()["tier"] != "a" {
		t.Errorf("Label(m1, tier=a) = %v, %v; want the label", cl, err)
	}
	if cl, err := h.c.Annotate(ctx, "m1", client.MetaChange{Set: map[string]string{"owner": "ops"}}); err != nil || cl.GetAnnotations()["owner"] != "ops" {
		t.Errorf("Annotate(m1, owner=ops) = %v, %v; want the annotation", cl, err)
	}
	if _, err := h.c.Label(ctx, "m1", client.MetaChange{Set: map[string]string{"tier": "b"}, ResourceVersion: 1}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Label(m1 at revision 1) = %v; want FailedPrecondition", err)
	}
	got, err := h.c.GetCluster(ctx, "m1")
	if err != nil || got.GetCluster().GetLabels()["tier"] != "a" || len(got.GetCluster().GetTaints()) != 1 {
		t.Errorf("GetCluster(m1) = %v, %v; want the label and taint set above", got, err)
	}
	if err := h.c.RemoveCluster(ctx, "m2"); err != nil {
		t.Fatalf("RemoveCluster(m2) = %v", err)
	}
	if _, err := h.c.GetCluster(ctx, "m2"); status.Code(err) != codes.NotFound {
		t.Errorf("GetCluster(m2) after RemoveCluster = %v; want NotFound", err)
	}
	fp := "sha256:" + strings.Repeat("0", 64)
	if _, err := h.c.Approve(ctx, "m1", fp); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Approve(m1, no key pending) = %v; want FailedPrecondition", err)
	}
	if err := h.c.RejectKey(ctx, "m1", fp); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("RejectKey(m1, no key pending) = %v; want FailedPrecondition", err)
	}
}

// TestTokenAndUserCalls: a created token is listed until deleted; a
// created user's certificate is issued for its CSR, and a revoked user is
// listed.
func TestTokenAndUserCalls(t *testing.T) {
	h, ctx := startHub(t), testContext(t)
	tok, err := h.c.CreateToken(ctx, &hubv1.CreateTokenRequest{ClusterName: "m1", Uses: 1, Description: "test"})
	if err != nil || tok.GetToken() == "" || tok.GetCaHash() == "" {
		t.Fatalf("CreateToken = %v, %v; want a token and the CA hash", tok, err)
	}
	listed, err := h.c.ListTokens(ctx)
	if err != nil || len(listed) != 1 || listed[0].GetId() != tok.GetInfo().GetId() {
		t.Fatalf("ListTokens = %v, %v; want the token created", listed, err)
	}
	if err := h.c.DeleteToken(ctx, tok.GetInfo().GetId()); err != nil {
		t.Fatal(err)
	}
	if listed, err := h.c.ListTokens(ctx); err != nil || len(listed) != 0 {
		t.Errorf("ListTokens after DeleteToken = %v, %v; want none", listed, err)
	}

	csr, _, err := certs.NewCSR("bob")
	if err != nil {
		t.Fatal(err)
	}
	user, err := h.c.CreateUser(ctx, &hubv1.CreateUserRequest{Name: "bob", Role: hubv1.Role_ROLE_READ_ONLY, CsrPem: csr})
	if err != nil || len(user.GetCertificatePem()) == 0 || len(user.GetPrivateKeyPem()) != 0 {
		t.Fatalf("CreateUser(bob, CSR) = %v, %v; want a certificate and no key", user, err)
	}
	if r, err := h.c.RevokeUser(ctx, "bob"); err != nil || r.GetName() != "bob" || r.GetRevokedBy() != "alice" {
		t.Errorf("RevokeUser(bob) = %v, %v; want bob revoked by alice", r, err)
	}
	revoked, err := h.c.ListRevokedUsers(ctx)
	if err != nil || len(revoked) != 1 || revoked[0].GetName() != "bob" {
		t.Errorf("ListRevokedUsers = %v, %v; want bob", revoked, err)
	}
}

// TestRetryable: the codes a watch is resumed after, and those that start
// it over; the rest end it. Explained errors keep their code.
func TestRetryable(t *testing.T) {
	explained := client.Config{Address: "hub:7443"}.Explain(status.Error(codes.Unavailable, "connection refused"))
	for _, tc := range []struct {
		name                 string
		err                  error
		retryable, restarted bool
	}{
		{"stream ended", io.EOF, true, true},
		{"unreachable", status.Error(codes.Unavailable, "x"), true, true},
		{"explained unreachable", explained, true, true},
		{"store watch broke", status.Error(codes.Internal, "watch closed"), true, true},
		{"concurrent change", status.Error(codes.Aborted, "x"), true, true},
		{"compacted", status.Error(codes.OutOfRange, "x"), false, true},
		{"fell behind", status.Error(codes.ResourceExhausted, "x"), false, false},
		{"not found", status.Error(codes.NotFound, "x"), false, false},
		{"denied", status.Error(codes.PermissionDenied, "x"), false, false},
		{"no status", errors.New("decode"), false, false},
		{"nil", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := client.Retryable(tc.err); got != tc.retryable {
				t.Errorf("Retryable(%v) = %v; want %v", tc.err, got, tc.retryable)
			}
			if got := client.Restartable(tc.err); got != tc.restarted {
				t.Errorf("Restartable(%v) = %v; want %v", tc.err, got, tc.restarted)
			}
		})
	}
}
