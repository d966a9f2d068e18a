package security

import (
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

const webYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: main, image: nginx}]}
`

// TestViewerReadsOnly: a viewer config written by `tetherctl user create`
// reads objects and placements but cannot apply, delete, issue tokens or
// users, or remove clusters; calls without a certificate are refused.
func TestViewerReadsOnly(t *testing.T) {
	h := startHub(t)
	viewerConf := filepath.Join(t.TempDir(), "victor.conf")
	mustCtl(t, h.adminConf(), "user", "create", "victor", "--role", "viewer", "-o", viewerConf)
	if _, errOut, code := ctl(t, h.adminConf(), "user", "create", "victor", "--role", "viewer", "-o", viewerConf); code == 0 || !strings.Contains(errOut, "exists") {
		t.Errorf("user create over an existing file: exit %d, %q; want refused", code, errOut)
	}
	admin := dial(t, h.addr, userTLS(t, h.adminConf()))
	if _, err := hubv1.NewObjectServiceClient(admin).Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(webYAML)}); err != nil {
		t.Fatal(err)
	}
	ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}

	viewer := dial(t, h.addr, userTLS(t, viewerConf))
	objects, places := hubv1.NewObjectServiceClient(viewer), hubv1.NewPlacementServiceClient(viewer)
	if _, err := objects.Get(rpcCtx(t), &hubv1.GetRequest{Ref: ref}); err != nil {
		t.Errorf("Get as viewer = %v; want allowed", err)
	}
	if _, err := places.GetPlacement(rpcCtx(t), &hubv1.GetPlacementRequest{Template: ref}); status.Code(err) == codes.PermissionDenied || status.Code(err) == codes.Unauthenticated {
		t.Errorf("GetPlacement as viewer = %v; want allowed", err)
	}
	refused := map[string]error{}
	_, refused["Apply"] = objects.Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(webYAML)})
	_, refused["Delete"] = objects.Delete(rpcCtx(t), &hubv1.DeleteRequest{Ref: ref})
	_, refused["CreateToken"] = hubv1.NewTokenServiceClient(viewer).CreateToken(rpcCtx(t), &hubv1.CreateTokenRequest{})
	_, refused["ListTokens"] = hubv1.NewTokenServiceClient(viewer).ListTokens(rpcCtx(t), &hubv1.ListTokensRequest{})
	_, refused["CreateUser"] = hubv1.NewUserServiceClient(viewer).CreateUser(rpcCtx(t), &hubv1.CreateUserRequest{Name: "eve", Role: hubv1.Role_ROLE_ADMIN})
	_, refused["Remove"] = hubv1.NewClusterServiceClient(viewer).Remove(rpcCtx(t), &hubv1.RemoveRequest{Name: "x"})
	for call, err := range refused {
		if status.Code(err) != codes.PermissionDenied {
			t.Errorf("%s as viewer = %v; want PermissionDenied", call, err)
		}
	}
	if _, errOut, code := ctl(t, viewerConf, "token", "create"); code == 0 || !strings.Contains(errOut, "permission denied") {
		t.Errorf("tetherctl token create as viewer: exit %d, %q; want permission denied", code, errOut)
	}

	anon := userTLS(t, viewerConf)
	anon.Certificates = nil
	noCert := dial(t, h.addr, anon)
	_, errGet := hubv1.NewObjectServiceClient(noCert).Get(rpcCtx(t), &hubv1.GetRequest{Ref: ref})
	_, errTok := hubv1.NewTokenServiceClient(noCert).CreateToken(rpcCtx(t), &hubv1.CreateTokenRequest{})
	for name, err := range map[string]error{"Get": errGet, "CreateToken": errTok} {
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s without a certificate = %v; want Unauthenticated", name, err)
		}
	}
}

// statusMessage reports whether a tetherctl error output says want.
func statusMessage(errOut, want string) bool { return strings.Contains(errOut, want) }
