package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// rpcTimeout bounds one client call.
const rpcTimeout = 30 * time.Second

// admin is a hub client with admin.conf's credentials.
type admin struct {
	t       testing.TB
	objects hubv1.ObjectServiceClient
	places  hubv1.PlacementServiceClient
}

// dialAdmin connects to h with the credentials of its admin.conf; the
// connection closes with the test.
func dialAdmin(t testing.TB, h *hubProc) *admin {
	t.Helper()
	cfg, err := clientconfig.Load(filepath.Join(h.dir, "admin.conf"))
	if err != nil {
		t.Fatalf("load admin.conf: %v", err)
	}
	tlsCfg, err := cfg.TLS()
	if err != nil {
		t.Fatalf("admin.conf TLS: %v", err)
	}
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)))
	if err != nil {
		t.Fatalf("dial %s: %v", h.addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &admin{t: t, objects: hubv1.NewObjectServiceClient(conn), places: hubv1.NewPlacementServiceClient(conn)}
}

// apply applies manifests and fails the test unless they were committed.
func (a *admin) apply(ctx context.Context, manifests string) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := a.objects.Apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(manifests)})
	if err != nil {
		a.t.Fatalf("Apply: %v", err)
	}
	if !resp.GetCommitted() {
		a.t.Fatalf("Apply committed nothing: %v", resp.GetResults())
	}
}

// get reads one object from the hub (a template's .status is the
// aggregated one).
func (a *admin) get(ctx context.Context, ref *hubv1.ObjectRef) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := a.objects.Get(ctx, &hubv1.GetRequest{Ref: ref})
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	// UnmarshalJSON, not encoding/json: numbers must come out as int64.
	if err := u.UnmarshalJSON(resp.GetObject().GetObjectJson()); err != nil {
		return nil, err
	}
	return u, nil
}

// placement is the template's placement: cluster → replicas.
func (a *admin) placement(ctx context.Context, ref *hubv1.ObjectRef) (map[string]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := a.places.GetPlacement(ctx, &hubv1.GetPlacementRequest{Template: ref})
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	for _, c := range resp.GetPlacement().GetClusters() {
		out[c.GetCluster()] = c.GetReplicas()
	}
	return out, nil
}

// simulate is where template would run with policies (and the stored
// ones): cluster → replicas.
func (a *admin) simulate(ctx context.Context, template, policies string) (map[string]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := a.places.Simulate(ctx, &hubv1.SimulateRequest{Template: []byte(template), Policies: []byte(policies)})
	if err != nil {
		return nil, err
	}
	out := map[string]int32{}
	for _, c := range resp.GetPlacement().GetClusters() {
		out[c.GetCluster()] = c.GetReplicas()
	}
	return out, nil
}

// ctxFor is a context that ends with the test.
func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
