package clientapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// Users of the roles tests: root is the fleet-wide admin of admin.conf's
// kind; alice and bob have certificates whose role the hub stores.
var (
	root  = &pki.Identity{Name: "root", Kind: pki.KindAdmin}
	alice = &pki.Identity{Name: "alice", Kind: pki.KindUser}
	bob   = &pki.Identity{Name: "bob", Kind: pki.KindUser}
)

// startRolesHub starts the services with stored roles (hub/roles) followed
// as a hub replica follows them.
func startRolesHub(t *testing.T) *hub {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(c, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	v, err := view.New(st, []view.Prefix{roles.Prefix()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	book := roles.New(st, v, hclog.NewNullLogger())
	h := startHubOn(t, clientapi.Config{Roles: book}, st)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- v.Run(runCtx) }()
	go func() { done <- book.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done; <-done }) // before the store closes
	return h
}

// conn dials the hub as id.
func (h *hub) conn(t *testing.T, id *pki.Identity) *grpc.ClientConn {
	t.Helper()
	cfg, err := h.ca.ClientTLS(id, time.Hour, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// setRole stores a user's role as root.
func (h *hub) setRole(t *testing.T, name string, role hubv1.Role, namespaces ...string) {
	t.Helper()
	_, err := hubv1.NewUserServiceClient(h.conn(t, root)).SetUserRole(ctx(t), &hubv1.SetUserRoleRequest{Name: name, Role: role, Namespaces: namespaces})
	if err != nil {
		t.Fatalf("SetUserRole(%s): %v", name, err)
	}
}

// TestEveryMethodRefusesAUserWithoutRole calls every method of the
// generated client API services, found in their descriptors, as a user
// with a valid certificate and no role: each must answer
// PERMISSION_DENIED from authorize, so no handler skips it.
func TestEveryMethodRefusesAUserWithoutRole(t *testing.T) {
	h := startRolesHub(t)
	conn := h.conn(t, bob)
	files := []protoreflect.FileDescriptor{
		hubv1.File_tether_hub_v1_object_proto, hubv1.File_tether_hub_v1_placement_proto,
		hubv1.File_tether_hub_v1_cluster_proto, hubv1.File_tether_hub_v1_token_proto,
		hubv1.File_tether_hub_v1_user_proto, hubv1.File_tether_hub_v1_rollout_proto,
	}
	n := 0
	for _, f := range files {
		for i := 0; i < f.Services().Len(); i++ {
			s := f.Services().Get(i)
			for j := 0; j < s.Methods().Len(); j++ {
				m := s.Methods().Get(j)
				name := "/" + string(s.FullName()) + "/" + string(m.Name())
				n++
				t.Run(string(s.Name())+"."+string(m.Name()), func(t *testing.T) {
					err := call(ctx(t), conn, name, m)
					if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), `user "bob" has no role`) {
						t.Errorf("%s as a user without a role = %v; want PERMISSION_DENIED saying bob has no role", name, err)
					}
				})
			}
		}
	}
	if n < 28 {
		t.Errorf("called %d methods; want at least the 28 of this writing", n)
	}
}

// call calls method with an empty request and returns its error (a
// stream's first).
func call(c context.Context, conn *grpc.ClientConn, method string, m protoreflect.MethodDescriptor) error {
	in, out := dynamicpb.NewMessage(m.Input()), dynamicpb.NewMessage(m.Output())
	if !m.IsStreamingServer() {
		return conn.Invoke(c, method, in, out)
	}
	s, err := conn.NewStream(c, &grpc.StreamDesc{ServerStreams: true}, method)
	if err != nil {
		return err
	}
	if err := s.SendMsg(in); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	return s.RecvMsg(out)
}

// deployment is a Deployment ns/name with a PropagationPolicy of its
// namespace for it.
func deployment(ns, name string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {app: %[2]s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
`, ns, name))
}

// refused fails the test unless err is PERMISSION_DENIED containing want.
func refused(t *testing.T, what string, err error, want string) {
	t.Helper()
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), want) {
		t.Errorf("%s = %v; want PERMISSION_DENIED naming %s", what, err, want)
	}
}
