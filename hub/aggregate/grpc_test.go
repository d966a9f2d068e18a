package aggregate

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/agentapi/agentapitest"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
)

// TestInvalidStatusOverGRPC: an agent sends a status report whose
// status_json is not JSON, over a real gRPC stream to the agent service
// backed by this aggregator and a real store. The report is refused alone:
// the stream stays open, the aggregator goes on (before, the invalid JSON
// reached the binding's encoding and the aggregator panicked, taking the
// hub down at every reconnect), and the same agent's next valid report is
// aggregated.
func TestInvalidStatusOverGRPC(t *testing.T) {
	e := newEnv(t)
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(store.BindingKey(webRef), webBinding("m1"))
	e.heartbeat("m1")
	counts := guard.NewCounts()
	a, _ := e.start(Config{Counts: counts})
	works := agentapitest.NewWorks()
	works.Set([]string{"m1"}, &agentv1.WorkUpsert{WorkKey: workKey, Version: "v1",
		Manifests: [][]byte{[]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"prod","name":"web"}}`)}})
	addr, ca := serveAgents(t, agentapi.Config{HubIdentity: "hub-test", Counts: counts}, works, a, e)

	stream := connectAgent(t, addr, ca, "m1")
	for {
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv before SyncDone: %v", err)
		}
		if m.GetSyncDone() != nil {
			break
		}
	}
	send := func(status string) {
		t.Helper()
		r := &agentv1.StatusReport{WorkKey: workKey, Version: "v1", Digest: status, Manifests: []*agentv1.ManifestStatus{
			manifest("web", agentv1.Health_HEALTH_HEALTHY, true, status)}}
		if err := stream.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: r}}); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	send(`["not", "an", "object"]`)
	send(`{"readyReplicas": 3,`) // truncated: not JSON
	// Wait until the bad reports are refused, or (had they been recorded)
	// a flush pass tried to write them.
	passes := a.run.passes.Load()
	deadline := time.Now().Add(waitTimeout)
	for counts.Get("agentapi", guard.KindRefused) < 2 && a.run.passes.Load() < passes+1 {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the bad reports to be refused or flushed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	send(memberStatus(3))
	b := e.waitBinding(webRef, "readyReplicas 3 from the valid report", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 3 })
	if healthOf(b, "m1") != configv1alpha1.ResourceHealthy {
		t.Errorf("m1 health = %s; want Healthy", healthOf(b, "m1"))
	}
	if got := counts.Get("agentapi", guard.KindRefused); got != 2 {
		t.Errorf("refused reports counted = %d; want 2", got)
	}
}

// TestReportRefusesInvalidJSON: Report itself refuses what the boundary
// would, whoever calls it, and nothing is recorded.
func TestReportRefusesInvalidJSON(t *testing.T) {
	e := newEnv(t)
	a := New(e.st, newInterpreter(t), e.leases, Config{Clock: e.clock, View: e.view}, hclog.NewNullLogger())
	err := a.Report(context.Background(), "m1", report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, `{"x":`)))
	if err == nil {
		t.Fatal("Report(invalid status_json) = nil; want an error")
	}
	if d, _ := a.Digests(context.Background(), "m1"); len(d) != 0 {
		t.Errorf("Digests after a refused report = %v; want none", d)
	}
}

// serveAgents serves the agent service over TLS on 127.0.0.1 until the
// test ends and returns its address and CA.
func serveAgents(t *testing.T, cfg agentapi.Config, works agentapi.Works, statuses agentapi.Statuses, e *env) (string, *pki.CA) {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := agentapi.New(cfg, works, statuses, e.leases, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	serving, err := ca.ServingTLS([]string{"127.0.0.1"}, time.Hour, tls.VerifyClientCertIfGiven)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(append(agentapi.ServerOptions(cfg), grpc.Creds(credentials.NewTLS(serving)))...)
	agentv1.RegisterAgentServiceServer(gs, srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
		gs.Stop()
		<-served
	})
	return ln.Addr().String(), ca
}

// connectAgent opens cluster's stream with an agent certificate and sends
// Hello.
func connectAgent(t *testing.T, addr string, ca *pki.CA, cluster string) agentv1.AgentService_ConnectClient {
	t.Helper()
	issued, err := ca.IssueClient(pki.Identity{Name: cluster, Kind: pki.KindAgent}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		RootCAs: ca.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	stream, err := agentv1.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if err := stream.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{AgentVersion: "test"}}}); err != nil {
		t.Fatalf("Send Hello: %v", err)
	}
	return stream
}

// panicky panics when it aggregates the status of a template named api.
type panicky struct{ Interpreter }

func (p panicky) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if obj.GetName() == "api" {
		panic("test: bad data in api")
	}
	return p.Interpreter.AggregateStatus(ctx, obj, items)
}

// TestPanickingBindingSkipped: a binding whose aggregation panics is
// skipped (and counted); the others' statuses are written.
func TestPanickingBindingSkipped(t *testing.T) {
	e := newEnv(t)
	apiRef := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "api"}
	api := deployment(t)
	api.SetName("api")
	apiBinding := webBinding("m1")
	apiBinding.Name, apiBinding.Spec.Resource.Name = "api-deployment", "api"
	e.put(store.ObjectKey(apiRef), api.Object)
	e.put(store.BindingKey(apiRef), apiBinding)
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(store.BindingKey(webRef), webBinding("m1"))
	e.heartbeat("m1")
	counts := guard.NewCounts()
	a := New(e.st, panicky{newInterpreter(t)}, e.leases, Config{Clock: e.clock, Counts: counts, View: e.view}, hclog.NewNullLogger())
	e.goRun("relay", a.Relay)
	e.goRun("aggregate", a.Run)
	for _, key := range []string{"apps/Deployment/prod/api", workKey} {
		r := &agentv1.StatusReport{WorkKey: key, Version: "v1", Digest: "d", Manifests: []*agentv1.ManifestStatus{
			manifest(strings.TrimPrefix(key, "apps/Deployment/prod/"), agentv1.Health_HEALTH_HEALTHY, true, memberStatus(3))}}
		if err := a.Report(context.Background(), "m1", r); err != nil {
			t.Fatalf("Report(%s): %v", key, err)
		}
	}
	e.waitBinding(webRef, "web's readyReplicas 3", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 3 })
	if got := counts.Get("aggregate", guard.KindPanic); got == 0 {
		t.Errorf("panics counted = 0; want the api binding's")
	}
}
