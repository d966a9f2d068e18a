package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/kube"
	"github.com/tetherproj/tether/agent/state"
	"github.com/tetherproj/tether/internal/version"
)

// Agent is one member cluster's agent. Build it with New; call Run once.
type Agent struct {
	log    hclog.Logger
	cfg    Config
	store  *state.Store
	client *hubclient.Client // nil until registered, when registering
	// ready is client once built, for the health server's goroutines.
	ready  atomic.Pointer[hubclient.Client]
	member *Member
	// reg is the agent's metrics registry, served on /metrics.
	reg *prometheus.Registry
	// check asks the member API server whether it is ready; nil without
	// Member.Ping or without HealthAddr.
	check *memberCheck
	// servers serve /metrics at cfg.MetricsAddr and /healthz and /readyz
	// at cfg.HealthAddr (one server when they are the same).
	servers []*httpServer
}

// New checks cfg, opens the local state (in --data-dir or the Secret of
// --state-secret) and builds the agent; it connects to nothing yet. An
// agent that registers (cfg.Token) builds its hub client in Run, once it
// has a certificate.
func New(cfg Config, logger hclog.Logger) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.registering() {
		cfg = cfg.withCredentialsIn()
	} else if _, err := cfg.tlsConfig(); err != nil {
		return nil, err
	}
	reg := newRegistry()
	requests := kube.NewRequests(reg) // every member client's requests, by verb and resource
	store, err := openStore(cfg, requests)
	if err != nil {
		return nil, err
	}
	member := cfg.Member
	if member == nil {
		if member, err = kubeMember(cfg, reg, requests, logger); err != nil {
			return nil, err
		}
	}
	if cfg.AgentVersion == "" {
		cfg.AgentVersion = version.Version
	}
	a := &Agent{log: logger, cfg: cfg, store: store, member: member, reg: reg}
	a.serve()
	if !cfg.registering() {
		if a.client, err = newClient(cfg, store, member, reg, logger); err != nil {
			return nil, err
		}
		a.ready.Store(a.client)
	}
	return a, nil
}

// serve builds the servers of --metrics-addr and --health-addr (one
// when they are the same address), and the member check /readyz reads.
func (a *Agent) serve() {
	byAddr := map[string]*http.ServeMux{}
	mux := func(flag, addr string) *http.ServeMux {
		if m := byAddr[addr]; m != nil {
			a.servers[0].flag += "," + flag // only the second flag can share
			return m
		}
		m := http.NewServeMux()
		byAddr[addr] = m
		a.servers = append(a.servers, &httpServer{flag: flag, addr: addr, handler: m, log: a.log.Named("http")})
		return m
	}
	if a.cfg.MetricsAddr != "" {
		mux("--metrics-addr", a.cfg.MetricsAddr).Handle("/metrics", metricsHandler(a.reg))
	}
	if a.cfg.HealthAddr == "" {
		return
	}
	if a.member.Ping != nil {
		every := a.cfg.MemberCheckEvery
		if every == 0 {
			every = DefaultMemberCheckEvery
		}
		a.check = &memberCheck{ping: a.member.Ping, every: every, log: a.log.Named("member-check")}
	}
	h := &health{client: a.ready.Load, member: a.check}
	h.handle(mux("--health-addr", a.cfg.HealthAddr))
}

// openStore opens the state in the Secret of cfg.StateSecret, else in
// cfg.DataDir.
func openStore(cfg Config, requests *kube.Requests) (*state.Store, error) {
	if cfg.StateSecret != "" {
		return secretStore(cfg, requests)
	}
	store, err := state.Open(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	return store, nil
}

// newClient builds the hub client over the certificate files of cfg. It
// renews the certificate of a registered agent, whose data directory holds
// its credentials; --cert and --key are managed outside the agent.
func newClient(cfg Config, store *state.Store, member *Member, reg prometheus.Registerer, logger hclog.Logger) (*hubclient.Client, error) {
	files := newCertFiles(cfg)
	tlsCfg, err := files.tlsConfig()
	if err != nil {
		return nil, err
	}
	var renew hubclient.Credentials
	if cfg.registering() {
		renew = files
	}
	return hubclient.New(hubclient.Config{
		Credentials:    renew,
		Addrs:          cfg.HubAddrs,
		TLS:            tlsCfg,
		AgentVersion:   cfg.AgentVersion,
		Store:          store,
		Applier:        member.Applier,
		Status:         member.Status,
		Capacity:       member.Capacity,
		OnSettings:     member.OnSettings,
		Customizations: member.Customizations,
		EvictionGrace:  cfg.EvictionGrace,
		Backoff:        cfg.Backoff,
		Registerer:     reg,
	}, logger)
}

// Run runs the agent until ctx ends, and returns once every part has
// exited: nil, or why the agent cannot go on (hubclient.ErrClusterRemoved,
// ErrRegistrationRefused). One part ending ends them all. A work's way:
//
//	hub ⇄ stream → books → state → apply → member cluster → status → report → stream
func (a *Agent) Run(ctx context.Context) error {
	g := newGroup(ctx)
	if a.check != nil {
		g.run(a.check.Run) // member API server's /readyz → our /readyz
	}
	for _, s := range a.servers {
		g.run(s.Run) // --metrics-addr, --health-addr: served while registering too
	}
	client, err := a.hubClient(g.ctx) // registers first with --token (once: --data-dir keeps the certificate)
	if err != nil {
		g.cancel()
		return errors.Join(g.wait(), filterCanceled([]error{err}))
	}
	defer client.Close()    // last: what the state writer has left, then the connection
	g.run(client.Stream)    // hub ⇄ stream ⇄ books: works and deletes in (books decide); acks, heartbeats, reports out
	g.run(client.Apply)     // books → state → member: each work's record written, then applied or deleted, acked
	g.run(client.Evict)     // works orphaned past --eviction-grace → deleted
	g.run(client.SaveState) // hub identity, customizations, status digests → state
	for _, r := range a.member.Runners {
		g.run(r.Run) // member side: applied objects watched, drift repaired; their status → reports → the stream
	}
	if proxy, err := a.memberProxy(); err != nil {
		g.cancel()
		return errors.Join(g.wait(), err)
	} else if proxy != nil {
		g.run(proxy) // hub's offers → tunnels on a connection of their own → member API server, as the hub user
	}
	a.log.Info("agent started", "version", version.Version)
	return g.wait()
}

// hubClient returns the hub client, registering the agent first when it
// registers with a bootstrap token.
func (a *Agent) hubClient(ctx context.Context) (*hubclient.Client, error) {
	if a.client != nil {
		return a.client, nil
	}
	if err := a.cfg.register(ctx, a.log); err != nil {
		return nil, err
	}
	client, err := newClient(a.cfg, a.store, a.member, a.reg, a.log)
	if err != nil {
		return nil, err
	}
	a.client = client
	a.ready.Store(client)
	return client, nil
}

// filterCanceled drops context.Canceled from errs: parts ending because
// the agent stops are not errors.
func filterCanceled(errs []error) error {
	var out []error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}
