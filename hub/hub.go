package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/aggregate"
	"github.com/tetherproj/tether/hub/authority"
	"github.com/tetherproj/tether/hub/customizations"
	"github.com/tetherproj/tether/hub/detector"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/leader"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/render"
	"github.com/tetherproj/tether/hub/scheduler"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/durable"
	"github.com/tetherproj/tether/internal/interpreter"
)

// Hub is one tether-hub process.
type Hub struct {
	cfg    Config
	logger hclog.Logger
	// servingRenewAfter, set by tests, replaces hub/serving's choice of
	// when to re-issue the serving certificate.
	servingRenewAfter func(life time.Duration) time.Duration
	// storeProbe, set by tests, replaces the store's Reachable as the
	// store watch's probe (storewatch.go).
	storeProbe func(ctx context.Context) error
}

// New checks cfg and returns the hub; nothing starts before Run.
func New(cfg Config, logger hclog.Logger) (*Hub, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("hub config: %w", err)
	}
	return &Hub{cfg: cfg, logger: logger}, nil
}

// Run is the whole hub: it opens the store and the CA, binds the gRPC port,
// starts every controller and server, and returns once ctx ends and all of
// them have stopped, or when one of them fails (which stops the others).
func (h *Hub) Run(ctx context.Context) error {
	st, identity, err := h.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	ca, lis, err := h.listen(ctx, st)
	if err != nil {
		return err
	}
	defer lis.close()
	// Whether this store may make agents delete: compared with what the
	// hub recorded next to its CA (hub/authority).
	auth, err := authority.Check(ctx, st, h.cfg.path(PKIDir), authority.Options{Identity: identity,
		Alone: len(h.cfg.EtcdEndpoints) == 0, Adopt: h.cfg.adoption()}, h.logger)
	if err != nil {
		return fmt.Errorf("store authority: %w", err)
	}
	counts := guard.NewCounts() // panics, decode errors, refused reports: tether_hub_controller_errors_total

	interp, err := interpreter.New(interpreter.Config{WebhookAllowCIDRs: h.cfg.WebhookAllowCIDRs}, h.logger)
	if err != nil {
		return fmt.Errorf("interpreter: %w", err)
	}
	defer interp.Close()
	// The detector and aggregator ask webhooks off their loops: a hung one
	// holds only its templates. Each has its own Deferred: a Deferred's
	// Ready wakes one loop.
	detectorHooks, aggregateHooks := interpreter.NewDeferred(interp), interpreter.NewDeferred(interp)
	defer detectorHooks.Close()
	defer aggregateHooks.Close()
	leases := liveness.New(liveness.Config{LeaseDuration: h.cfg.LeaseDuration, Logger: h.logger})
	// Heartbeats go to etcd and come back to every replica's leases, so the
	// leader knows every cluster whichever replica holds its stream; they
	// also renew this replica's own leases at once, however slow etcd.
	heartbeats := liveness.NewPublisher(st, liveness.PublisherConfig{Replica: replicaName(lis.grpc.Addr().String()),
		LeaseDuration: h.cfg.LeaseDuration, Local: leases, Logger: h.logger})
	var _ agentapi.Toucher = heartbeats // streams held back keep their leases
	// Controllers that write decisions do so through fenced, which lets a
	// write through only while this replica leads (hub/leader).
	fence := &store.Fence{}
	fenced := st.Fenced(fence)
	rics := customizations.New(st, interp, h.logger) // also tells render and detector which kinds a change concerns
	detectorOpts := []detector.Option{detector.WithCounts(counts), detector.WithCustomizations(rics),
		detector.WithSkippedNamespaces(h.cfg.SkippedPropagatingNamespaces...), detector.WithNamespacePropagation(!h.cfg.NoNamespacePropagation)}
	works := render.New(st, interp, render.Config{Authority: auth, Counts: counts, Customizations: rics}, h.logger)
	var _ agentapi.Readiness = works // streams read Hello once it has rendered
	// Agents' acks and reports are relayed through etcd, unfenced (any
	// replica writes them), and followed back by every replica, so the
	// leader's aggregator sees every cluster's and any replica knows what
	// is held. A hub on its embedded etcd is the only replica: it holds
	// them in memory.
	alone := len(h.cfg.EtcdEndpoints) == 0
	statuses := aggregate.New(fenced, aggregateHooks, leases, aggregate.Config{Counts: counts, Relay: st,
		Replica: replicaName(lis.grpc.Addr().String()), Local: alone}, h.logger)
	registry := membership.NewRegistry(st, ca, membership.Config{AgentCertLifetime: h.cfg.AgentCertLifetime, NewClustersCordoned: h.cfg.NewClustersCordoned}, h.logger)
	sched := scheduler.New(fenced, leases, scheduler.Config{FailoverUnreachable: h.cfg.FailoverUnreachable,
		UnreachableToleration: h.cfg.UnreachableToleration, GracefulEvictionTimeout: h.cfg.GracefulEvictionTimeout,
		MaxWorks: h.cfg.MaxWorksPerCluster}, h.logger)
	elector := leader.New(st.Client(), fence, leader.Config{TTL: h.cfg.LeaderTTL, Name: replicaName(lis.grpc.Addr().String()),
		Alone: alone}, h.logger) // alone: leads from the start, whatever its CPU
	srv, err := h.newAPI(apiDeps{st: st, ca: ca, addr: lis.grpc.Addr().String(), identity: identity,
		interp: interp, works: works, statuses: statuses, leases: leases, heartbeats: heartbeats, registry: registry, authority: auth, counts: counts,
		disrupted: func() bool { return elector.IsLeader() && sched.Disrupted() }, leader: elector,
		customizations: rics}) // sent to every agent
	if err != nil {
		return err
	}
	revoke := func(ctx context.Context) error { return registry.Watch(ctx, srv.agents.Recheck) }
	probe := st.Reachable
	if h.storeProbe != nil {
		probe = h.storeProbe
	}
	storeLoss := storeWatch{probe: probe, log: h.logger, alone: alone,
		lost: func(why string) { srv.setReady(false); srv.agents.Suspend(why) },
		found: func(ctx context.Context) {
			catchUp(ctx, st.Revision, works, h.logger)
			srv.agents.Resume()
			srv.setReady(true)
		}}
	lead := func(ctx context.Context) error { // one term of leadership; ctx ends when it is lost
		t := newGroup(ctx, h.logger, counts)
		t.run("registration", membership.NewRegistrar(fenced, leases, h.logger, // first heartbeat → /tether/clusters/<name>
			membership.NewClustersCordoned(h.cfg.NewClustersCordoned)).Run)
		t.run("detector", detector.New(fenced, detectorHooks, h.logger, detectorOpts...).Run) // templates × policies → bindings
		t.run("scheduler", sched.Run)                                                         // bindings × clusters → placements, eviction
		t.run("aggregate", statuses.Run)                                                      // agents' statuses → binding status
		t.run("reports-prune", statuses.Prune)                                                // removed clusters' relayed reports → deleted
		return t.wait()
	}

	g := newGroup(ctx, h.logger, counts)
	g.run("authority", auth.Run)      // store revision and checkpoint → record next to the CA
	g.run("leases", leases.Run)       // liveness records → cluster liveness
	g.run("liveness", heartbeats.Run) // this replica's agents' heartbeats → liveness records
	g.run("liveness-follow", func(ctx context.Context) error { return liveness.Follow(ctx, st, leases, h.logger) })
	g.run("reports", statuses.Relay)  // this replica's agents' acks and reports → /tether/reports/ → every replica's aggregator
	g.run("customizations", rics.Run) // stored RICs and webhooks → interpreter
	g.run("leader", func(ctx context.Context) error { return elector.Run(ctx, lead) })
	g.run("render", works.Run)                                // placements → works, served to agents (every replica)
	g.run("revocation", revoke)                               // agent records → revoked streams ended
	g.run("grpc", srv.serve(lis.grpc))                        // agents and clients, one port
	g.run("cluster-models", srv.models.Run)                   // clusters' resource models → their agents' Settings
	g.run("user-revocations", srv.revoked.Run)                // revoked users → their certificates refused on every call
	g.run("store-watch", storeLoss.run)                       // external etcd out of reach → agents sent to other replicas, not ready
	g.run("serving", srv.cert.Run)                            // serving certificate re-issued before it expires
	g.run("admin.conf", h.keepAdminConf(ca, lis.grpc.Addr())) // admin.conf's certificate renewed before it expires
	if lis.metrics != nil {
		g.run("metrics", srv.metrics.serveHTTP(lis.metrics)) // /healthz, /readyz, /metrics
	}
	srv.setReady(true) // before hub.addr exists: whoever read it finds the hub ready
	if err := h.announce(ca, lis.grpc.Addr().String(), identity); err != nil {
		g.fail(err)
	}
	err = g.wait()
	srv.setReady(false)
	_ = os.Remove(h.cfg.path(AddrFile))
	h.logger.Info("hub stopped")
	return err
}

// openStore opens the embedded or external etcd and reads the hub's
// identity.
func (h *Hub) openStore(ctx context.Context) (*store.Store, string, error) {
	if err := os.MkdirAll(h.cfg.DataDir, 0o700); err != nil {
		return nil, "", fmt.Errorf("data dir: %w", err)
	}
	st, err := store.Open(ctx, store.Config{DataDir: h.cfg.DataDir, Endpoints: h.cfg.EtcdEndpoints, TLS: h.cfg.EtcdTLS, QuotaBytes: h.cfg.EmbeddedQuotaBytes}, h.logger)
	if err != nil {
		return nil, "", fmt.Errorf("open store: %w", err)
	}
	// A replica of an adjacent version may share the store (rolling
	// upgrades); one that cannot read its format stops here.
	if _, err := st.CheckFormat(ctx); err != nil {
		st.Close()
		return nil, "", fmt.Errorf("store format: %w", err)
	}
	identity, err := st.Identity(ctx, h.cfg.restoredIdentity())
	if errors.Is(err, store.ErrIdentityLost) {
		err = fmt.Errorf("%w; a new identity would make every agent take this hub for another one. Start once with "+
			"--adopt-identity ID, ID being the identity the agents hold (tether-agent logs it at start as hub_identity), to give it back", err)
	}
	if err != nil {
		st.Close()
		return nil, "", fmt.Errorf("hub identity: %w", err)
	}
	return st, identity, nil
}

// listeners are the hub's bound ports.
type listeners struct {
	grpc    net.Listener
	metrics net.Listener // nil without --metrics-listen
}

func (l *listeners) close() {
	l.grpc.Close()
	if l.metrics != nil {
		l.metrics.Close()
	}
}

// listen opens the CA (ca.go) and binds the ports, so that a port in use
// fails the start before anything runs.
func (h *Hub) listen(ctx context.Context, st *store.Store) (*pki.CA, *listeners, error) {
	ca, err := h.openCA(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	lis := &listeners{}
	if lis.grpc, err = net.Listen("tcp", h.cfg.Listen); err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	if h.cfg.MetricsListen != "" {
		if lis.metrics, err = net.Listen("tcp", h.cfg.MetricsListen); err != nil {
			lis.grpc.Close()
			return nil, nil, fmt.Errorf("metrics listen: %w", err)
		}
		h.logger.Info("serving metrics", "address", lis.metrics.Addr().String())
	}
	return ca, lis, nil
}

// announce writes admin.conf (or renews it) and hub.addr, then logs
// what a user needs to connect: the address and the CA pin.
func (h *Hub) announce(ca *pki.CA, addr, identity string) error {
	server := dialAddr(addr)
	if err := h.adminConf(ca, addr).ensure(); err != nil {
		return err
	}
	if err := durable.WriteFile(h.cfg.path(AddrFile), []byte(server+"\n"), 0o600); err != nil {
		return err
	}
	h.logger.Info("hub serving", "address", addr, "ca_hash", ca.Hash(), "hub_identity", identity,
		"admin_conf", h.cfg.path(AdminConfFile), "data_dir", h.cfg.DataDir, "external_etcd", len(h.cfg.EtcdEndpoints) > 0)
	return nil
}

// replicaName names this replica in etcd (leader key, liveness records)
// for operators: host name and listen address.
func replicaName(addr string) string {
	host, err := os.Hostname()
	if err != nil {
		return addr
	}
	return host + "/" + addr
}
