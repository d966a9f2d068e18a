package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// rpcTimeout bounds one client call.
const rpcTimeout = 30 * time.Second

// admin is a client holding admin.conf's credentials.
type admin struct {
	t       *testing.T
	conn    *grpc.ClientConn
	objects hubv1.ObjectServiceClient
	places  hubv1.PlacementServiceClient
}

// dialAdmin connects to addr with the credentials of dir/admin.conf.
func dialAdmin(t *testing.T, dir, addr string) *admin {
	t.Helper()
	cfg, err := clientconfig.Load(filepath.Join(dir, "admin.conf"))
	if err != nil {
		t.Fatalf("load admin.conf: %v", err)
	}
	tlsCfg, err := cfg.TLS()
	if err != nil {
		t.Fatalf("admin.conf TLS: %v", err)
	}
	conn := dial(t, addr, tlsCfg)
	return &admin{t: t, conn: conn, objects: hubv1.NewObjectServiceClient(conn), places: hubv1.NewPlacementServiceClient(conn)}
}

// dial opens a client connection that is closed with the test.
func dial(t *testing.T, addr string, tlsCfg *tls.Config) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// apply applies manifests and returns the response or the call's error.
func (a *admin) apply(ctx context.Context, manifests string) (*hubv1.ApplyResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	return a.objects.Apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(manifests)})
}

// mustApply applies manifests and fails unless every object was committed.
func (a *admin) mustApply(ctx context.Context, manifests string) *hubv1.ApplyResponse {
	a.t.Helper()
	resp, err := a.apply(ctx, manifests)
	if err != nil {
		a.t.Fatalf("Apply: %v", err)
	}
	if !resp.GetCommitted() {
		a.t.Fatalf("Apply committed nothing: %v", resp.GetResults())
	}
	return resp
}

// placement returns the placement of a template, nil when it has none yet.
func (a *admin) placement(ctx context.Context, ref *hubv1.ObjectRef) (*hubv1.Placement, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := a.places.GetPlacement(ctx, &hubv1.GetPlacementRequest{Template: ref})
	if err != nil {
		return nil, err
	}
	return resp.GetPlacement(), nil
}

// placedOn is the sorted cluster list of a placement.
func placedOn(p *hubv1.Placement) []string {
	var out []string
	for _, c := range p.GetClusters() {
		out = append(out, c.GetCluster())
	}
	return out
}

// deployment is the ref of a Deployment in namespace default.
func deployment(name string) *hubv1.ObjectRef {
	return &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name}
}

// caPool reads a PEM CA file.
func caPool(t *testing.T, path string) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		t.Fatalf("%s: no PEM certificate", path)
	}
	return pool
}
