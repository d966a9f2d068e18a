package hub

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/aggregate"
	"github.com/tetherproj/tether/hub/authority"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/render"
	"github.com/tetherproj/tether/hub/serving"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter"
)

const (
	cfgTemplate = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"k":"v"}}`
	cfgWorkKey  = "core/ConfigMap/default/cfg"
)

func cfgBinding(clusters ...string) string {
	var targets []string
	for _, c := range clusters {
		targets = append(targets, `{"name":"`+c+`"}`)
	}
	return `{"apiVersion":"work.tether.io/v1alpha1","kind":"ResourceBinding","metadata":{"name":"cfg-configmap","namespace":"default"},` +
		`"spec":{"resource":{"apiVersion":"v1","kind":"ConfigMap","namespace":"default","name":"cfg"},"placement":{},"clusters":[` +
		strings.Join(targets, ",") + `]}}`
}

// storeDir is a hub data directory with its store opened and checked.
type storeDir struct {
	t    *testing.T
	ctx  context.Context
	data string
	st   *store.Store
	auth *authority.Authority
}

func (d *storeDir) open() {
	d.t.Helper()
	st, err := store.Open(d.ctx, store.Config{DataDir: d.data}, hclog.NewNullLogger())
	if err != nil {
		d.t.Fatalf("store.Open: %v", err)
	}
	d.st = st
	if d.auth, err = authority.Check(d.ctx, st, filepath.Join(d.data, PKIDir), authority.Options{Identity: "restore-test", Alone: true}, hclog.NewNullLogger()); err != nil {
		d.t.Fatalf("authority.Check: %v", err)
	}
}

func (d *storeDir) put(key, value string) {
	d.t.Helper()
	if _, err := d.st.Put(d.ctx, key, []byte(value)); err != nil {
		d.t.Fatalf("put %s: %v", key, err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.RemoveAll(to); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp %s %s: %v: %s", from, to, err, out)
	}
}

// TestRestoredStoreSendsNoDelete: the store is restored from a backup taken
// before a ConfigMap was placed on m1. m1's agent, which holds it,
// reconnects to the hub over gRPC: it must get no delete (the hub is not
// authoritative). Before, the hub vouched the work gone (its older binding
// no longer places it on m1) and told the agent to delete it.
func TestRestoredStoreSendsNoDelete(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := &storeDir{t: t, ctx: ctx, data: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(d.data, PKIDir), 0o700); err != nil {
		t.Fatal(err)
	}
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	d.open()
	identity, err := d.st.Identity(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"m1", "m2"} {
		d.put(store.ClusterKey(c), `{"metadata":{"name":"`+c+`"}}`)
	}
	d.put(store.ObjectsPrefix+cfgWorkKey, cfgTemplate)
	d.put(store.BindingsPrefix+cfgWorkKey, cfgBinding("m2"))
	d.st.Close()
	backup := filepath.Join(t.TempDir(), "etcd")
	copyDir(t, filepath.Join(d.data, "etcd"), backup)

	// Later: the ConfigMap is placed on m1 too, and m1's agent gets it.
	d.open()
	d.put(store.BindingsPrefix+cfgWorkKey, cfgBinding("m1", "m2"))
	version := renderedVersion(t, ctx, d.st, interp, "m1")
	d.st.Close()

	copyDir(t, backup, filepath.Join(d.data, "etcd"))
	d.open()
	defer d.st.Close()
	if ok, reason := d.auth.Authoritative(); ok {
		t.Fatalf("Authoritative() after a restore = true; want false")
	} else {
		t.Logf("not authoritative: %s", reason)
	}
	msgs := reconnect(t, ctx, d, interp, identity, &agentv1.HeldWork{WorkKey: cfgWorkKey, Version: version})
	for _, m := range msgs {
		if del := m.GetWorkDelete(); del != nil {
			t.Errorf("agent m1 was told to delete %s after the store was restored; want no delete", del.GetWorkKey())
		}
	}
}

// renderedVersion runs a renderer until it publishes and returns the
// version of the ConfigMap's work on cluster.
func renderedVersion(t *testing.T, ctx context.Context, st *store.Store, interp *interpreter.Interpreter, cluster string) string {
	t.Helper()
	rctx, stop := context.WithCancel(ctx)
	r := render.New(runView(t, rctx, st), interp, render.Config{}, hclog.NewNullLogger())
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	defer func() { stop(); <-done }()
	works, _, err := r.Current(ctx, cluster)
	if err != nil || len(works) != 1 {
		t.Fatalf("Current(%s) = %v, %v; want the ConfigMap's work", cluster, works, err)
	}
	return works[0].GetVersion()
}

// reconnect serves the agent service over the store as the hub does and
// connects m1's agent holding held; it returns what the hub sent up to
// SyncDone.
func reconnect(t *testing.T, ctx context.Context, d *storeDir, interp *interpreter.Interpreter, identity string, held ...*agentv1.HeldWork) []*agentv1.HubMessage {
	t.Helper()
	rctx, stop := context.WithCancel(ctx)
	works := render.New(runView(t, rctx, d.st), interp, render.Config{Authority: d.auth}, hclog.NewNullLogger())
	leases := liveness.New(liveness.Config{})
	statuses := aggregate.New(d.st, interp, leases, aggregate.Config{}, hclog.NewNullLogger())
	done := make(chan error, 1)
	go func() { done <- works.Run(rctx) }()
	defer func() { stop(); <-done }()

	ca, err := pki.LoadOrCreateCA(filepath.Join(d.data, PKIDir))
	if err != nil {
		t.Fatal(err)
	}
	cfg := agentapi.Config{HubIdentity: identity, Authority: d.auth}
	srv, err := agentapi.New(cfg, works, statuses, leases, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	servingCert, err := serving.New(ca, serving.Config{Hosts: servingHosts("127.0.0.1:0")}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg := serverTLS(ca, servingCert)
	gs := grpc.NewServer(append(agentapi.ServerOptions(cfg), grpc.Creds(credentials.NewTLS(tlsCfg)))...)
	agentv1.RegisterAgentServiceServer(gs, srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		_ = srv.Close(cctx)
		gs.Stop()
		<-served
	}()

	issued, err := ca.IssueClient(pki.Identity{Name: "m1", Kind: pki.KindAgent}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(issued.CertPEM, issued.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		RootCAs: ca.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sctx, scancel := context.WithTimeout(ctx, time.Minute)
	defer scancel()
	stream, err := agentv1.NewAgentServiceClient(conn).Connect(sctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	hello := &agentv1.Hello{AgentVersion: "test", LastHubIdentity: identity, HeldWorks: held}
	if err := stream.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: hello}}); err != nil {
		t.Fatalf("Send Hello: %v", err)
	}
	var msgs []*agentv1.HubMessage
	for {
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv before SyncDone: %v", err)
		}
		msgs = append(msgs, m)
		if m.GetSyncDone() != nil {
			return msgs
		}
	}
}

// runView runs the replica's view of st until ctx ends; the test's
// cleanup waits for it to return.
func runView(t *testing.T, ctx context.Context, st *store.Store) *view.View {
	t.Helper()
	v, err := view.New(st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("view.New: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("view Run = %v; want nil", err)
		}
	})
	return v
}
