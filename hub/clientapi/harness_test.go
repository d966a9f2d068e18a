package clientapi_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/clientapi/clientapitest"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked after the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines returns the stacks of this package's goroutines still
// running after wait, or "".
func leakedGoroutines(wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for {
		buf := make([]byte, 1<<20)
		stacks := strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
		var leaked []string
		for _, g := range stacks[1:] {
			if strings.Contains(g, "tether/hub/clientapi.") || strings.Contains(g, "tether/hub/store.") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hub is the client API over real gRPC and TLS on 127.0.0.1, on a real
// embedded etcd.
type hub struct {
	ca   *pki.CA
	addr string
	st   *store.Store
}

// Identities of the tests' clients.
var (
	admin  = &pki.Identity{Name: "alice", Kind: pki.KindAdmin}
	viewer = &pki.Identity{Name: "victor", Kind: pki.KindViewer}
	agent  = &pki.Identity{Name: "m1", Kind: pki.KindAgent}
)

// startHub starts the services and stops everything when the test ends.
func startHub(t *testing.T, cfg clientapi.Config) *hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return startHubOn(t, cfg, st)
}

// startHubOn starts the services on st, which it closes when the test ends.
func startHubOn(t *testing.T, cfg clientapi.Config, st *store.Store) *hub {
	t.Helper()
	t.Cleanup(func() { st.Close() }) // after the server stops
	h := &hub{st: st}
	var err error
	if h.ca, err = pki.LoadOrCreateCA(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	srv, err := clientapi.New(cfg, h.st, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	// Client certificates are verified when given, so that a client
	// without one reaches the service and is refused there.
	h.addr = clientapitest.Serve(t, srv, h.ca, tls.VerifyClientCertIfGiven)
	return h
}

// client is a connection with a client certificate for id (none for nil).
type client struct {
	objects    hubv1.ObjectServiceClient
	placements hubv1.PlacementServiceClient
	clusters   hubv1.ClusterServiceClient
}

func (h *hub) dial(t *testing.T, id *pki.Identity, opts ...grpc.DialOption) *client {
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
	return &client{
		objects:    hubv1.NewObjectServiceClient(conn),
		placements: hubv1.NewPlacementServiceClient(conn),
		clusters:   hubv1.NewClusterServiceClient(conn),
	}
}

// ctx is a per-test context with a deadline, so a hang fails the test.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// apply applies manifests as admin and fails the test on an RPC error.
func (c *client) apply(t *testing.T, manifests []byte, dryRun bool) *hubv1.ApplyResponse {
	t.Helper()
	resp, err := c.objects.Apply(ctx(t), &hubv1.ApplyRequest{Manifests: manifests, DryRun: dryRun})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return resp
}

// outcomes renders the results as "Kind name OUTCOME" lines.
func outcomes(resp *hubv1.ApplyResponse) []string {
	var out []string
	for _, r := range resp.GetResults() {
		out = append(out, fmt.Sprintf("%s %s/%s %s", r.GetRef().GetKind(), r.GetRef().GetNamespace(), r.GetRef().GetName(),
			strings.TrimPrefix(r.GetOutcome().String(), "APPLY_OUTCOME_")))
	}
	return out
}
