package hub_test

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// TestUserRevokedThroughOneReplicaIsRefusedByAll: two replicas on one
// etcd. A user whose role is narrowed through replica A has his Watch of
// a namespace on B ended with PERMISSION_DENIED naming it; revoked
// through A, he is refused by replica B on his next call, and the Watch
// he had open on B ends with UNAUTHENTICATED naming the revocation; an
// admin cannot revoke themselves.
func TestUserRevokedThroughOneReplicaIsRefusedByAll(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	a := runReplica(t, baseConfig(t, e))
	a.serving(t)
	cfgB := baseConfig(t, e)
	cfgB.CACertFile, cfgB.CAKeyFile = filepath.Join(a.dir, hub.PKIDir, "ca.crt"), filepath.Join(a.dir, hub.PKIDir, "ca.key")
	b := runReplica(t, cfgB)
	b.serving(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTimeout)
	defer cancel()

	adminTLS, err := a.adminConf(t).TLS()
	if err != nil {
		t.Fatal(err)
	}
	users := hubv1.NewUserServiceClient(dial(t, a.addr, adminTLS))
	issued, err := users.CreateUser(ctx, &hubv1.CreateUserRequest{Name: "bob", Role: hubv1.Role_ROLE_READ_ONLY})
	if err != nil {
		t.Fatal(err)
	}
	bobCert, err := tls.X509KeyPair(issued.GetCertificatePem(), issued.GetPrivateKeyPem())
	if err != nil {
		t.Fatal(err)
	}
	bobTLS := &tls.Config{RootCAs: adminTLS.RootCAs, Certificates: []tls.Certificate{bobCert}, MinVersion: tls.VersionTLS12}
	bobOnB := dial(t, b.addr, bobTLS)
	apply := `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}, "data": {"a": "1"}}`
	if _, err := hubv1.NewObjectServiceClient(dial(t, a.addr, adminTLS)).Apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(apply)}); err != nil {
		t.Fatal(err)
	}
	// From revision 1: the ConfigMap's creation comes first, proving the
	// stream open before the revocation.
	watch, err := hubv1.NewObjectServiceClient(bobOnB).Watch(ctx, &hubv1.WatchRequest{Kind: "ConfigMap", StartRevision: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := watch.Recv(); err != nil || ev.GetObject() == nil {
		t.Fatalf("bob's Watch on replica B before the revocation: %v, %v; want the applied ConfigMap", ev, err)
	}

	// A role changed through replica A narrows bob's streams on B: his
	// Watch of namespace default ends, naming it.
	inDefault, err := hubv1.NewObjectServiceClient(bobOnB).Watch(ctx, &hubv1.WatchRequest{Kind: "ConfigMap", Namespace: "default", StartRevision: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inDefault.Recv(); err != nil {
		t.Fatalf("bob's Watch of default on replica B before his role changed: %v", err)
	}
	if _, err := users.SetUserRole(ctx, &hubv1.SetUserRoleRequest{Name: "bob", Role: hubv1.Role_ROLE_READ_ONLY, Namespaces: []string{"team-x"}}); err != nil {
		t.Fatalf("SetUserRole(bob) through replica A: %v", err)
	}
	if _, err := inDefault.Recv(); status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), `namespace "default"`) {
		t.Errorf("bob's Watch of default on replica B after his role lost it: %v; want PermissionDenied naming default", err)
	}

	if _, err := users.RevokeUser(ctx, &hubv1.RevokeUserRequest{Name: "admin"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("RevokeUser(the caller's own name) = %v; want InvalidArgument", err)
	}
	revoked, err := users.RevokeUser(ctx, &hubv1.RevokeUserRequest{Name: "bob"})
	if err != nil {
		t.Fatalf("RevokeUser(bob) through replica A: %v", err)
	}
	if r := revoked.GetRevoked(); r.GetName() != "bob" || r.GetRevokedBy() != "admin" {
		t.Errorf("RevokeUser(bob) = %v; want bob revoked by admin", r)
	}

	if _, err := watch.Recv(); status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), `user "bob" was revoked`) {
		t.Errorf("bob's open Watch on replica B after the revocation: %v; want Unauthenticated naming the revocation", err)
	}
	deadline := time.Now().Add(replicaTimeout)
	for {
		_, err := hubv1.NewClusterServiceClient(bobOnB).ListClusters(ctx, &hubv1.ListClustersRequest{})
		if status.Code(err) == codes.Unauthenticated && strings.Contains(err.Error(), `user "bob" was revoked`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's ListClusters on replica B after the revocation: %v; want Unauthenticated naming the revocation", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	list, err := hubv1.NewUserServiceClient(dial(t, b.addr, adminTLS)).ListRevokedUsers(ctx, &hubv1.ListRevokedUsersRequest{})
	if err != nil || len(list.GetRevoked()) != 1 || list.GetRevoked()[0].GetName() != "bob" {
		t.Errorf("ListRevokedUsers through replica B = %v, %v; want bob", list, err)
	}
	if _, err := hubv1.NewClusterServiceClient(dial(t, b.addr, adminTLS)).ListClusters(ctx, &hubv1.ListClustersRequest{}); err != nil {
		t.Errorf("the admin's ListClusters on replica B = %v; want served", err)
	}
}
