package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetherproj/tether/agent"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	"github.com/tetherproj/tether/agent/state"
)

func TestValidateNamesTheFlag(t *testing.T) {
	ok := agent.Config{HubAddrs: []string{"hub:443"}, CertFile: "c", KeyFile: "k", CAFile: "ca", DataDir: "d"}
	tests := []struct {
		name   string
		modify func(*agent.Config)
		flag   string // "" for valid
	}{
		{"valid", func(*agent.Config) {}, ""},
		{"no hub", func(c *agent.Config) { c.HubAddrs = nil }, "--hub"},
		{"hub without port", func(c *agent.Config) { c.HubAddrs = []string{"hub"} }, `--hub "hub"`},
		{"hub replicas", func(c *agent.Config) { c.HubAddrs = []string{"hub-0:443", "hub-1:443", "10.0.0.3:8443"} }, ""},
		{"hub replica without port", func(c *agent.Config) { c.HubAddrs = []string{"hub-0:443", "hub-1"} }, `--hub entry 2 of 2, "hub-1"`},
		{"hub replica without host", func(c *agent.Config) { c.HubAddrs = []string{"hub-0:443", ":443"} }, `--hub entry 2 of 2, ":443"`},
		{"hub replica bad port", func(c *agent.Config) { c.HubAddrs = []string{"hub-0:99999", "hub-1:443"} }, `--hub entry 1 of 2, "hub-0:99999"`},
		{"hub replica empty", func(c *agent.Config) { c.HubAddrs = []string{"hub-0:443", "", "hub-1:443"} }, `--hub entry 2 of 3, ""`},
		{"hub replica twice", func(c *agent.Config) { c.HubAddrs = []string{"hub-0:443", "hub-1:443", "hub-0:443"} }, `--hub entry 3 of 3, "hub-0:443": the same address as entry 1`},
		{"no cert", func(c *agent.Config) { c.CertFile = "" }, "--cert"},
		{"no key", func(c *agent.Config) { c.KeyFile = "" }, "--key"},
		{"no ca", func(c *agent.Config) { c.CAFile = "" }, "--ca"},
		{"no data dir", func(c *agent.Config) { c.DataDir = "" }, "--data-dir"},
		{"negative grace", func(c *agent.Config) { c.EvictionGrace = -time.Second }, "--eviction-grace"},
		{"metrics address without port", func(c *agent.Config) { c.MetricsAddr = "localhost" }, "--metrics-addr"},
		{"metrics address", func(c *agent.Config) { c.MetricsAddr = "127.0.0.1:9464" }, ""},
		{"health address without port", func(c *agent.Config) { c.HealthAddr = "localhost" }, "--health-addr"},
		{"health address", func(c *agent.Config) { c.HealthAddr = ":8081" }, ""},
		{"token", func(c *agent.Config) { c.Token = "abc.def" }, "--token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.modify(&c)
			err := c.Validate()
			switch {
			case tt.flag == "" && err != nil:
				t.Errorf("Validate() = %v; want nil", err)
			case tt.flag != "" && (err == nil || !strings.Contains(err.Error(), tt.flag)):
				t.Errorf("Validate() = %v; want an error naming %s", err, tt.flag)
			}
		})
	}
}

func TestValidateRegistrationFlags(t *testing.T) {
	hash := "sha256:" + strings.Repeat("ab", 32)
	ok := agent.Config{HubAddrs: []string{"hub:443"}, Token: "abcdef.0123456789abcdef", CAHash: hash, ClusterName: "edge-1", DataDir: "d"}
	tests := []struct {
		name   string
		modify func(*agent.Config)
		flag   string // "" for valid
	}{
		{"valid", func(*agent.Config) {}, ""},
		{"no token", func(c *agent.Config) { c.Token = "" }, "--token"},
		{"no ca hash", func(c *agent.Config) { c.CAHash = "" }, "--ca-hash"},
		{"no cluster", func(c *agent.Config) { c.ClusterName = "" }, "--cluster"},
		{"ca hash without sha256", func(c *agent.Config) { c.CAHash = strings.Repeat("ab", 32) }, "--ca-hash"},
		{"ca hash too short", func(c *agent.Config) { c.CAHash = "sha256:abc" }, "--ca-hash"},
		{"with --cert", func(c *agent.Config) { c.CertFile = "c" }, "--cert"},
		{"no data dir", func(c *agent.Config) { c.DataDir = "" }, "--data-dir"},
		{"no hub", func(c *agent.Config) { c.HubAddrs = nil }, "--hub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.modify(&c)
			err := c.Validate()
			switch {
			case tt.flag == "" && err != nil:
				t.Errorf("Validate() = %v; want nil", err)
			case tt.flag != "" && (err == nil || !strings.Contains(err.Error(), tt.flag)):
				t.Errorf("Validate() = %v; want an error naming %s", err, tt.flag)
			}
		})
	}
}

func config(certs *hubtest.Certs, addr, dir string, member *agent.Member) agent.Config {
	return agent.Config{
		HubAddrs: []string{addr}, CertFile: certs.CertFile, KeyFile: certs.KeyFile, CAFile: certs.CAFile,
		DataDir: dir, Member: member, Backoff: func(int) time.Duration { return 20 * time.Millisecond },
	}
}

func TestNewRefusesBadFiles(t *testing.T) {
	certs := hubtest.NewCerts(t)
	member := &agent.Member{Applier: hubtest.NewApplier()}
	tests := []struct {
		name   string
		modify func(*agent.Config)
		want   string
	}{
		{"missing ca", func(c *agent.Config) { c.CAFile = "/nonexistent/ca.crt" }, "--ca"},
		{"ca without PEM", func(c *agent.Config) { c.CAFile = c.KeyFile + ".missing" }, "--ca"},
		{"key of another certificate", func(c *agent.Config) { c.KeyFile = c.CAFile }, "--cert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config(certs, "127.0.0.1:1", t.TempDir(), member)
			tt.modify(&cfg)
			if _, err := agent.New(cfg, hclog.NewNullLogger()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() = %v; want an error naming %s", err, tt.want)
			}
		})
	}
}

func TestNewRefusesCorruptState(t *testing.T) {
	certs := hubtest.NewCerts(t)
	dir := t.TempDir()
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store.Dir(), "digests.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = agent.New(config(certs, "127.0.0.1:1", dir, &agent.Member{Applier: hubtest.NewApplier()}), hclog.NewNullLogger())
	if !errors.Is(err, state.ErrCorrupt) {
		t.Errorf("New() = %v; want state.ErrCorrupt", err)
	}
}

// runner records that Run ran until the agent stopped.
type runner struct{ ran chan struct{} }

func (r *runner) Run(ctx context.Context) error {
	close(r.ran)
	<-ctx.Done()
	return ctx.Err()
}

func TestRunConnectsAndStops(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	r := &runner{ran: make(chan struct{})}
	applier := hubtest.NewApplier()
	a, err := agent.New(config(certs, hub.Addr, t.TempDir(), &agent.Member{Applier: applier, Runners: []agent.Runner{r}}), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	s := hub.Next(t)
	s.Send(t, hubtest.Welcome("hub-a", time.Second), hubtest.Upsert("a", "v1"), hubtest.SyncDone(1))
	s.Recv(t, hubtest.Acks)
	<-r.ran
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run() = %v; want nil after cancel", err)
		}
	case <-time.After(hubtest.Timeout):
		t.Fatal("Run did not return after cancel")
	}
}

// TestRunFailsOverBetweenReplicas runs an agent given two hub replicas,
// each serving a certificate for its own address only, through the
// agent's own TLS configuration: the stream reaches one; when that one
// stops, the next stream reaches the other, with the work the first sent.
func TestRunFailsOverBetweenReplicas(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hubs := [2]*hubtest.Hub{
		hubtest.StartServing(t, certs, "127.0.0.1:0", certs.ServingFor(t, "127.0.0.1")),
		hubtest.StartServing(t, certs, "127.0.0.2:0", certs.ServingFor(t, "127.0.0.2")),
	}
	cfg := config(certs, "", t.TempDir(), &agent.Member{Applier: hubtest.NewApplier()})
	cfg.HubAddrs = []string{hubs[0].Addr, hubs[1].Addr}
	a, err := agent.New(cfg, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v; want nil after cancel", err)
		}
	}()

	first, s := nextStream(t, hubs)
	s.Send(t, hubtest.Welcome("hub-a", time.Second), hubtest.Upsert("a", "v1"), hubtest.SyncDone(1))
	s.Recv(t, hubtest.Acks)
	hubs[first].Stop()
	s = hubs[1-first].Next(t)
	if held := s.Hello().GetHeldWorks(); len(held) != 1 || held[0].GetWorkKey() != "a" {
		t.Errorf("Hello to the other replica holds %v; want work a", held)
	}
}

// nextStream returns the next stream an agent opens to either hub, and
// which hub it reached.
func nextStream(t *testing.T, hubs [2]*hubtest.Hub) (int, *hubtest.Stream) {
	t.Helper()
	select {
	case s := <-hubs[0].Streams:
		return 0, s
	case s := <-hubs[1].Streams:
		return 1, s
	case <-time.After(hubtest.Timeout):
		t.Fatalf("no agent stream within %s", hubtest.Timeout)
		return 0, nil
	}
}
