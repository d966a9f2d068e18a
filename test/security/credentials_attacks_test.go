package security

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// keySource is the address the key attacks register from: their
// registrations spend neither 127.0.0.1's rate limit (the flood's) nor
// tokenSource's.
const keySource = "127.0.0.4"

// credentialAttacks: a revoked user, approvals of a key without or with
// the wrong fingerprint, a second key for a name whose new key is pending.
func credentialAttacks() []attack {
	return []attack{
		{"revoked user's calls and open Watch", revokedUser},
		{"approve a pending key without or with a wrong fingerprint", approveWithoutFingerprint},
		{"second new key while one is pending", secondPendingKey},
	}
}

// revokedUser: a viewer with a Watch open is revoked (`tetherctl user
// revoke`): the Watch ends, a new call is refused Unauthenticated naming
// the revocation; the suite's viewer, another user, still reads.
func revokedUser(t *testing.T, e *hostileEnv) string {
	name := fmt.Sprintf("mallory-%d", e.attacks)
	conf := filepath.Join(t.TempDir(), "mallory.conf")
	mustCtl(t, e.h.adminConf(), "user", "create", name, "--role", "viewer", "-o", conf)
	objects := hubv1.NewObjectServiceClient(dial(t, e.h.addr, userTLS(t, conf)))
	if _, err := objects.Get(rpcCtx(t), &hubv1.GetRequest{Ref: webRef}); err != nil {
		t.Fatalf("Get as %s before the revocation: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	ws, err := objects.Watch(ctx, &hubv1.WatchRequest{ApiVersion: "apps/v1", Kind: "Deployment"})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		for {
			if _, err := ws.Recv(); err != nil {
				ended <- err
				return
			}
		}
	}()
	// A certificate issued in the same second as the revocation is refused
	// too: let the second of issue pass, so that what is shown is the
	// revocation of an older certificate.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	mustCtl(t, e.h.adminConf(), "user", "revoke", name)
	select {
	case err := <-ended:
		if status.Code(err) == codes.OK || status.Code(err) == codes.DeadlineExceeded {
			t.Errorf("the revoked user's Watch ended with %v; want the hub to end it", err)
		}
		t.Logf("revoked user's Watch ended: %v", err)
	case <-time.After(servingWait):
		t.Fatalf("the revoked user's Watch still open %s after the revocation", servingWait)
	}
	_, err = objects.Get(rpcCtx(t), &hubv1.GetRequest{Ref: webRef})
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("Get as the revoked %s = %v; want Unauthenticated naming the revocation", name, err)
	}
	if _, err := hubv1.NewObjectServiceClient(e.viewer).Get(rpcCtx(t), &hubv1.GetRequest{Ref: webRef}); err != nil {
		t.Errorf("another viewer's Get after the revocation: %v; want served", err)
	}
	return "refused Unauthenticated; open Watch ended; other users served"
}

// pendingKeyOf registers cluster with a first key and then with a new one
// (refused, recorded pending) from keySource and returns the pending
// fingerprint GetCluster shows.
func (e *hostileEnv) pendingKeyOf(t *testing.T, cluster string) string {
	t.Helper()
	if _, err := registerFrom(t, e.h, e.tok, cluster, nil, keySource); err != nil {
		t.Fatalf("register %s: %v", cluster, err)
	}
	if _, err := registerFrom(t, e.h, e.tok, cluster, nil, keySource); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("register %s with a new key = %v; want FailedPrecondition, the key pending", cluster, err)
	}
	return e.pendingFingerprint(t, cluster)
}

func (e *hostileEnv) pendingFingerprint(t *testing.T, cluster string) string {
	t.Helper()
	resp, err := hubv1.NewClusterServiceClient(e.admin).GetCluster(rpcCtx(t), &hubv1.GetClusterRequest{Name: cluster})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetCluster().GetPendingKeyFingerprint()
}

// approveWithoutFingerprint: Approve of a pending key without its
// fingerprint is InvalidArgument, with another fingerprint
// FailedPrecondition; the key stays pending. It is rejected afterwards.
func approveWithoutFingerprint(t *testing.T, e *hostileEnv) string {
	cluster := fmt.Sprintf("keyed-%d", e.attacks)
	fp := e.pendingKeyOf(t, cluster)
	clusters := hubv1.NewClusterServiceClient(e.admin)
	_, err := clusters.Approve(rpcCtx(t), &hubv1.ApproveRequest{Name: cluster})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("Approve without a fingerprint = %v; want InvalidArgument naming the fingerprint", err)
	}
	wrong := "sha256:" + strings.Repeat("0", 64)
	_, err2 := clusters.Approve(rpcCtx(t), &hubv1.ApproveRequest{Name: cluster, KeyFingerprint: wrong})
	if status.Code(err2) != codes.FailedPrecondition {
		t.Errorf("Approve with a wrong fingerprint = %v; want FailedPrecondition", err2)
	}
	if got := e.pendingFingerprint(t, cluster); got != fp {
		t.Errorf("pending key after the refused approvals = %q; want %q", got, fp)
	}
	if _, err := clusters.RejectKey(rpcCtx(t), &hubv1.RejectKeyRequest{Name: cluster, KeyFingerprint: fp}); err != nil {
		t.Errorf("reject the pending key: %v", err)
	}
	return fmt.Sprintf("refused %s and %s; the key stays pending", status.Code(err), status.Code(err2))
}

// secondPendingKey: while a new key is pending for a name, a registration
// with yet another key is refused FailedPrecondition and the pending key
// is not overwritten.
func secondPendingKey(t *testing.T, e *hostileEnv) string {
	cluster := fmt.Sprintf("keyed-%d", e.attacks)
	fp := e.pendingKeyOf(t, cluster)
	_, err := registerFrom(t, e.h, e.tok, cluster, nil, keySource)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "pending") {
		t.Errorf("register %s with a third key while one is pending = %v; want FailedPrecondition saying a key is pending", cluster, err)
	}
	if got := e.pendingFingerprint(t, cluster); got != fp {
		t.Errorf("pending key after another registration = %q; want %q (never overwritten)", got, fp)
	}
	if _, err := hubv1.NewClusterServiceClient(e.admin).RejectKey(rpcCtx(t), &hubv1.RejectKeyRequest{Name: cluster, KeyFingerprint: fp}); err != nil {
		t.Errorf("reject the pending key: %v", err)
	}
	return "refused FailedPrecondition; the pending key kept"
}
