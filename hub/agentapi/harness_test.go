package agentapi_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/agentapi/agentapitest"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/liveness/livenesstest"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/leakcheck"
)

// hubIdentity is the identity of a real store, read once in TestMain.
var hubIdentity string

func TestMain(m *testing.M) {
	if err := readIdentity(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(leakcheck.Main(m, leakcheck.Filter{Only: []string{"tether/hub/agentapi", "grpc/internal/transport"}}))
}

func readIdentity() error {
	dir, err := os.MkdirTemp("", "agentapi-test-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.Open(ctx, store.Config{DataDir: dir}, hclog.NewNullLogger())
	if err != nil {
		return err
	}
	defer s.Close()
	hubIdentity, err = s.Identity(ctx, "")
	return err
}

// hub is one agent service over real gRPC and TLS on 127.0.0.1.
type hub struct {
	ca       *pki.CA
	addr     string
	srv      *agentapi.Server
	works    *agentapitest.Works
	statuses *agentapitest.Statuses
	leases   *liveness.Leases
	clock    *livenesstest.Clock
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// startHub starts a hub with cfg (its identity defaulted) and stops it,
// waiting for every goroutine, when the test ends; opts are added to its
// gRPC server's.
func startHub(t testing.TB, cfg agentapi.Config, opts ...grpc.ServerOption) *hub {
	t.Helper()
	if cfg.HubIdentity == "" {
		cfg.HubIdentity = hubIdentity
	}
	h := &hub{works: agentapitest.NewWorks(), statuses: agentapitest.NewStatuses(), clock: livenesstest.NewClock(t0)}
	h.leases = liveness.New(liveness.Config{Clock: h.clock, LeaseDuration: cfg.LeaseDuration, PauseThreshold: -1}) // the fake clock jumps
	var err error
	if h.ca, err = pki.LoadOrCreateCA(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if h.srv, err = agentapi.New(cfg, h.works, h.statuses, h.leases, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	// The hub's TLS: client certificates of its CA verified when given
	// (Register goes without).
	serving, err := h.ca.ServingTLS([]string{"127.0.0.1"}, time.Hour, tls.VerifyClientCertIfGiven)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(append(append(agentapi.ServerOptions(cfg), grpc.Creds(credentials.NewTLS(serving))), opts...)...)
	agentv1.RegisterAgentServiceServer(gs, h.srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	leased := make(chan error, 1)
	go func() { leased <- h.leases.Run(ctx) }()
	t.Cleanup(func() {
		closeCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		if err := h.srv.Close(closeCtx); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
		gs.Stop()
		cancel()
		<-served
		<-leased
	})
	return h
}

// dial connects to the hub with a client certificate for id, or without
// one when id is nil.
func (h *hub) dial(t testing.TB, id *pki.Identity, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	cfg, err := h.ca.ClientTLS(id, time.Hour, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(h.addr, append(opts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// agent is a test agent: one Connect stream made with the generated client.
type agent struct {
	t      testing.TB
	stream agentv1.AgentService_ConnectClient
	cancel context.CancelFunc
}

// streamTimeout bounds every test stream, so a missing message fails the
// test instead of hanging it.
const streamTimeout = 60 * time.Second

// connect opens a stream for cluster with an agent certificate and sends
// hello (when not nil).
func (h *hub) connect(t testing.TB, cluster string, hello *agentv1.Hello, opts ...grpc.DialOption) *agent {
	t.Helper()
	conn := h.dial(t, &pki.Identity{Name: cluster, Kind: pki.KindAgent}, opts...)
	return openStream(t, conn, hello)
}

func openStream(t testing.TB, conn *grpc.ClientConn, hello *agentv1.Hello) *agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamTimeout)
	t.Cleanup(cancel)
	stream, err := agentv1.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	a := &agent{t: t, stream: stream, cancel: cancel}
	if hello != nil {
		a.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: hello}})
	}
	return a
}

// send sends m. io.EOF is not an error here: it means the hub already
// ended the stream (gRPC's Send reports that only as io.EOF), and the next
// Recv returns how it ended, which the test checks.
func (a *agent) send(m *agentv1.AgentMessage) {
	a.t.Helper()
	if err := a.stream.Send(m); err != nil && !errors.Is(err, io.EOF) {
		a.t.Fatalf("Send: %v", err)
	}
}

func (a *agent) recv() *agentv1.HubMessage {
	a.t.Helper()
	m, err := a.stream.Recv()
	if err != nil {
		a.t.Fatalf("Recv: %v", err)
	}
	return m
}

// expect receives len(want) messages and compares their descriptions.
func (a *agent) expect(want ...string) {
	a.t.Helper()
	var got []string
	for range want {
		got = append(got, describe(a.recv()))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		a.t.Errorf("received:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// describe renders a hub message as one short line.
func describe(m *agentv1.HubMessage) string {
	switch m := m.GetMessage().(type) {
	case *agentv1.HubMessage_Welcome:
		return "welcome " + m.Welcome.GetHubIdentity()
	case *agentv1.HubMessage_WorkUpsert:
		return "upsert " + m.WorkUpsert.GetWorkKey() + "@" + m.WorkUpsert.GetVersion()
	case *agentv1.HubMessage_WorkDelete:
		return "delete " + m.WorkDelete.GetWorkKey() + " " + m.WorkDelete.GetDeletionPolicy().String()
	case *agentv1.HubMessage_SyncDone:
		return fmt.Sprintf("syncdone %d", m.SyncDone.GetWorkCount())
	case *agentv1.HubMessage_StatusRequest:
		return "status " + strings.Join(m.StatusRequest.GetWorkKeys(), ",")
	case *agentv1.HubMessage_Goodbye:
		return "goodbye " + m.Goodbye.GetReason().String()
	case *agentv1.HubMessage_CertificateRenewed:
		return "renewed " + m.CertificateRenewed.GetErrorMessage()
	case *agentv1.HubMessage_Customizations:
		return fmt.Sprintf("customizations %s (%d, %d)", m.Customizations.GetVersion(),
			len(m.Customizations.GetResourceInterpreterCustomizations()), len(m.Customizations.GetWebhookConfigurations()))
	}
	return fmt.Sprintf("unexpected %T", m.GetMessage())
}

func work(key, version string) *agentv1.WorkUpsert {
	return &agentv1.WorkUpsert{
		WorkKey: key, Version: version,
		Manifests:    [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + key + `"}}`)},
		ApplyOptions: &agentv1.ApplyOptions{DeletionPolicy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE},
	}
}

func held(identity string, kv ...string) *agentv1.Hello {
	h := &agentv1.Hello{AgentVersion: "test", LastHubIdentity: identity}
	for i := 0; i < len(kv); i += 2 {
		h.HeldWorks = append(h.HeldWorks, &agentv1.HeldWork{WorkKey: kv[i], Version: kv[i+1]})
	}
	return h
}

// eventually polls cond until it holds or fails the test after a deadline.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// leaseView is a cluster's lease as tests see it.
type leaseView = lease.Lease

// slowClient makes a client whose flow-control window stays small.
func slowClient() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(slowWindow), grpc.WithInitialConnWindowSize(slowWindow)}
}
