package hub_test

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/internal/certs"
)

// TestNewClustersStartCordoned: a hub run with NewClustersCordoned
// (--new-clusters-cordoned) registers a cluster cordoned, until an admin
// uncordons it; a registration asserting a label that is not a Kubernetes
// label is refused, the label named.
func TestNewClustersStartCordoned(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	cfg := baseConfig(t, e)
	cfg.NewClustersCordoned = true
	r := runReplica(t, cfg)
	r.serving(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTimeout)
	defer cancel()
	r.registerAgent(t, ctx, "edge-1")
	adminTLS, err := r.adminConf(t).TLS()
	if err != nil {
		t.Fatal(err)
	}
	clusters := hubv1.NewClusterServiceClient(dial(t, r.addr, adminTLS))
	got, err := clusters.GetCluster(ctx, &hubv1.GetClusterRequest{Name: "edge-1"})
	if err != nil || !got.GetCluster().GetCordoned() {
		t.Fatalf("GetCluster(edge-1) after registration = %v, %v; want it cordoned", got.GetCluster(), err)
	}
	un, err := clusters.Uncordon(ctx, &hubv1.UncordonRequest{Name: "edge-1"})
	if err != nil || un.GetCluster().GetCordoned() {
		t.Errorf("Uncordon(edge-1) = %v, %v; want it schedulable", un.GetCluster(), err)
	}

	tok, err := hubv1.NewTokenServiceClient(dial(t, r.addr, adminTLS)).CreateToken(ctx, &hubv1.CreateTokenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	csrPEM, _, err := certs.NewCSR("edge-2")
	if err != nil {
		t.Fatal(err)
	}
	anon := &tls.Config{RootCAs: adminTLS.RootCAs, MinVersion: tls.VersionTLS12}
	_, err = agentv1.NewAgentServiceClient(dial(t, r.addr, anon)).Register(ctx, &agentv1.RegisterRequest{
		Token: tok.GetToken(), ClusterName: "edge-2", CsrPem: csrPEM, AgentVersion: "test",
		Topology: &agentv1.Topology{Labels: map[string]string{"tether.io/gpu": "yes please"}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `label "tether.io/gpu"`) {
		t.Errorf("Register(edge-2, label tether.io/gpu=\"yes please\") = %v; want InvalidArgument naming the label", err)
	}
}
