package ctl_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/clientapi/clientapitest"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/internal/clientconfig"
)

// onlineHub is the hub's client API on a real gRPC server with TLS on
// 127.0.0.1, over a real embedded etcd, with config files for an admin and
// a viewer.
type onlineHub struct {
	st            *store.Store
	leases        *liveness.Leases
	admin, viewer string // config file paths
	ca            *pki.CA
	addr          string
}

func startOnlineHub(t *testing.T) *onlineHub {
	t.Helper()
	h := newOnlineHub(t)
	h.leases = liveness.New(liveness.Config{})
	h.serve(t, clientapi.Config{Leases: h.leases})
	return h
}

// newOnlineHub opens the hub's store and CA, closed when the test ends.
func newOnlineHub(t *testing.T) *onlineHub {
	t.Helper()
	h := &onlineHub{st: etcdtest.Embedded(t)}
	var err error
	if h.ca, err = pki.LoadOrCreateCA(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	return h
}

// serve serves the client API with cfg and opts, requiring client
// certificates as the hub does, and writes the admin and viewer configs.
func (h *onlineHub) serve(t *testing.T, cfg clientapi.Config, opts ...grpc.ServerOption) {
	t.Helper()
	api, err := clientapi.New(cfg, h.st, nil, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	h.addr = clientapitest.Serve(t, api, h.ca, tls.RequireAndVerifyClientCert, opts...)
	h.admin = h.writeConfig(t, pki.Identity{Name: "alice", Kind: pki.KindAdmin}, h.addr)
	h.viewer = h.writeConfig(t, pki.Identity{Name: "victor", Kind: pki.KindViewer}, h.addr)
}

// writeConfig writes a client config for id naming server, as `tetherctl
// user create` would, and returns its path.
func (h *onlineHub) writeConfig(t *testing.T, id pki.Identity, server string) string {
	t.Helper()
	issued, err := h.ca.IssueClient(id, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), id.Name+".conf")
	c := &clientconfig.Config{Server: server, User: id.Name, CertificateAuthority: string(h.ca.CertPEM),
		ClientCertificate: string(issued.CertPEM), ClientKey: string(issued.KeyPEM)}
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// ctl runs tetherctl in-process with --config conf and stdin in.
func runWith(t *testing.T, conf, in string, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code = ctl.Run(ctx, append([]string{"--config", conf}, args...), strings.NewReader(in), &o, &e)
	return code, o.String(), e.String()
}

// mustRun runs tetherctl and fails the test unless it exits 0.
func mustRun(t *testing.T, conf string, args ...string) string {
	t.Helper()
	code, out, errOut := runWith(t, conf, "", args...)
	if code != 0 {
		t.Fatalf("tetherctl %s = %d, stderr %q; want 0", strings.Join(args, " "), code, errOut)
	}
	return out
}

// put stores a raw value, as the hub's controllers would.
func (h *onlineHub) put(t *testing.T, key, value string) {
	t.Helper()
	if _, err := h.st.Put(context.Background(), key, []byte(value)); err != nil {
		t.Fatal(err)
	}
}

// putClusters registers m1 (prod, eu; heartbeat: Ready), m2 (dev) and m3
// (prod, tainted dedicated=gpu:NoSchedule).
func (h *onlineHub) putClusters(t *testing.T) {
	t.Helper()
	for _, c := range []string{
		`{"apiVersion": "cluster.tether.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1", "labels": {"env": "prod"}}, "spec": {"region": "eu"}}`,
		`{"apiVersion": "cluster.tether.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m2", "labels": {"env": "dev"}}, "spec": {"region": "eu"}}`,
		`{"apiVersion": "cluster.tether.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m3", "labels": {"env": "prod"}},
		  "spec": {"region": "us", "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}`,
	} {
		var m struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		_ = json.Unmarshal([]byte(c), &m)
		h.put(t, store.ClusterKey(m.Metadata.Name), c)
	}
	h.leases.Heartbeat("m1", &agentv1.Heartbeat{AgentVersion: "v0.3.0",
		ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"cpu": "8", "memory": "16Gi", "pods": "110"}}})
}

func TestDialErrorsSayWhatToDo(t *testing.T) {
	h := startOnlineHub(t)
	closed := func() string { // a port nothing listens on
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	unreachable := h.writeConfig(t, pki.Identity{Name: "alice", Kind: pki.KindAdmin}, closed)
	otherCA, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	foreign := (&onlineHub{ca: otherCA}).writeConfig(t, pki.Identity{Name: "alice", Kind: pki.KindAdmin}, h.addr)

	t.Setenv("HOME", t.TempDir())
	t.Setenv(clientconfig.EnvVar, "")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no config anywhere", []string{"get", "deployments"}, "pass --config or set TETHER_CONFIG; the hub writes DATA_DIR/admin.conf"},
		{"missing --config", []string{"--config", filepath.Join(t.TempDir(), "nope"), "clusters"}, "no config at"},
		{"unreachable hub", []string{"--config", unreachable, "get", "deployments"}, "hub at " + closed + " unreachable: is tether-hub running?"},
		{"another hub's CA", []string{"--config", foreign, "clusters"}, "TLS with the hub at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o, e bytes.Buffer
			code := ctl.Run(context.Background(), tc.args, strings.NewReader(""), &o, &e)
			if code != 1 || !strings.Contains(e.String(), tc.want) {
				t.Errorf("tetherctl %v = %d, stderr %q; want 1 and %q", tc.args, code, e.String(), tc.want)
			}
		})
	}
	t.Run("TETHER_CONFIG", func(t *testing.T) {
		t.Setenv(clientconfig.EnvVar, h.admin)
		var o, e bytes.Buffer
		if code := ctl.Run(context.Background(), []string{"clusters"}, strings.NewReader(""), &o, &e); code != 0 {
			t.Errorf("tetherctl clusters with $TETHER_CONFIG = %d, stderr %q; want 0", code, e.String())
		}
	})
}
