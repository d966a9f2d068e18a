package hub

import (
	"context"
	"fmt"

	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/aggregate"
	"github.com/tetherproj/tether/hub/customizations"
	"github.com/tetherproj/tether/hub/detector"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/leader"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/render"
	"github.com/tetherproj/tether/hub/revocation"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/rollout"
	"github.com/tetherproj/tether/hub/scheduler"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/storewatch"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter"
)

// parts are the hub's parts, built over what open opened; tasks runs
// them.
type parts struct {
	*base
	hub    *Hub
	counts *guard.Counts // panics, decode errors, refused reports: tether_hub_controller_errors_total
	interp *interpreter.Interpreter
	// detectorHooks and aggregateHooks ask webhooks off the detector's and
	// the aggregator's loops: a hung one holds only its templates. Each
	// loop has its own: a Deferred's Ready wakes one loop.
	detectorHooks, aggregateHooks *interpreter.Deferred
	leases                        *liveness.Leases
	heartbeats                    *liveness.Publisher
	// fenced is the store through which the controllers that write
	// decisions write: it lets a write through only while this replica
	// leads (hub/leader).
	fenced    *store.Store
	rics      *customizations.Watcher // also tells render and detector which kinds a change concerns
	view      *view.View              // this replica's one list+watch of the store, decoded once
	works     *render.Renderer
	statuses  *aggregate.Aggregator
	registry  *membership.Registry
	sched     *scheduler.Loop
	elector   *leader.Elector
	srv       *api
	storeLoss storewatch.Watch
}

// wire builds every part of the hub over b; nothing runs yet.
func (h *Hub) wire(b *base) (*parts, error) {
	p := &parts{base: b, hub: h, counts: guard.NewCounts()}
	interp, err := interpreter.New(interpreter.Config{WebhookAllowCIDRs: h.cfg.WebhookAllowCIDRs}, h.logger)
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w", err)
	}
	p.interp, p.detectorHooks, p.aggregateHooks = interp, interpreter.NewDeferred(interp), interpreter.NewDeferred(interp)
	p.leases = liveness.New(liveness.Config{LeaseDuration: h.cfg.LeaseDuration, Logger: h.logger})
	// Heartbeats go to etcd and come back to every replica's leases, so the
	// leader knows every cluster whichever replica holds its stream; they
	// also renew this replica's own leases at once, however slow etcd.
	p.heartbeats = liveness.NewPublisher(b.st, liveness.PublisherConfig{Replica: replicaName(b.addr()),
		LeaseDuration: h.cfg.LeaseDuration, Local: p.leases, Logger: h.logger})
	var _ agentapi.Toucher = p.heartbeats // streams held back keep their leases
	fence := &store.Fence{}
	p.fenced = b.st.Fenced(fence)
	if p.view, err = view.New(b.st, replicaPrefixes(), h.logger); err != nil {
		return nil, err
	}
	p.rics = customizations.New(p.view, interp, h.logger)
	p.works = render.New(p.view, interp, render.Config{Authority: b.auth, Counts: p.counts, Customizations: p.rics}, h.logger)
	var _ agentapi.Readiness = p.works // streams read Hello once it has rendered
	h.wireControllers(p, fence)
	if err := h.wireServers(p); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// wireControllers builds the aggregator, the registry, the scheduling
// loop and the election.
func (h *Hub) wireControllers(p *parts, fence *store.Fence) {
	// Agents' acks and reports are relayed through etcd, unfenced (any
	// replica writes them), and followed back by every replica, so the
	// leader's aggregator sees every cluster's and any replica knows what
	// is held. A hub on its embedded etcd is the only replica: it holds
	// them in memory.
	p.statuses = aggregate.New(p.fenced, p.aggregateHooks, p.leases, aggregate.Config{Counts: p.counts, Relay: p.st, View: p.view,
		Replica: replicaName(p.addr()), Local: h.alone()}, h.logger)
	p.registry = membership.NewRegistry(p.st, p.ca, membership.Config{AgentCertLifetime: h.cfg.AgentCertLifetime,
		NewClustersCordoned: h.cfg.NewClustersCordoned}, h.logger)
	p.sched = scheduler.New(p.fenced, p.view, p.leases, scheduler.Config{FailoverUnreachable: h.cfg.FailoverUnreachable,
		UnreachableToleration: h.cfg.UnreachableToleration, GracefulEvictionTimeout: h.cfg.GracefulEvictionTimeout,
		MaxWorks: h.cfg.MaxWorksPerCluster}, h.logger)
	p.elector = leader.New(p.st.Client(), fence, leader.Config{TTL: h.cfg.LeaderTTL, Name: replicaName(p.addr()),
		Alone: h.alone()}, h.logger) // alone: leads from the start, whatever its CPU
}

// newRollout builds the rollout loop of one term of leadership.
func (p *parts) newRollout() *rollout.Loop {
	return rollout.New(p.fenced, p.view, p.works, p.statuses, p.leases, rollout.Config{}, p.hub.logger)
}

// wireServers builds the gRPC server with its services and the store
// watch that takes it out of service while the store is lost.
func (h *Hub) wireServers(p *parts) error {
	srv, err := h.newAPI(apiDeps{st: p.st, view: p.view, ca: p.ca, addr: p.addr(), identity: p.identity,
		interp: p.interp, works: p.works, statuses: p.statuses, leases: p.leases, heartbeats: p.heartbeats, registry: p.registry,
		authority: p.auth, counts: p.counts, disrupted: func() bool { return p.elector.IsLeader() && p.sched.Disrupted() },
		leader: p.elector, customizations: p.rics}) // sent to every agent
	if err != nil {
		return err
	}
	p.srv = srv
	probe := p.st.Reachable
	if h.storeProbe != nil {
		probe = h.storeProbe
	}
	p.storeLoss = storewatch.Watch{Probe: probe, Log: h.logger, Alone: h.alone(),
		Lost: func(why string) { srv.setReady(false); srv.agents.Suspend(why) },
		Found: func(ctx context.Context) {
			storewatch.CatchUp(ctx, p.st.Revision, p.works, h.logger)
			srv.agents.Resume()
			srv.setReady(true)
		}}
	return nil
}

// newRegistrar is a term's registrar.
func (p *parts) newRegistrar() *membership.Registrar {
	return membership.NewRegistrar(p.fenced, p.leases, p.hub.logger, membership.NewClustersCordoned(p.hub.cfg.NewClustersCordoned))
}

// newDetector is a term's detector.
func (p *parts) newDetector() *detector.Detector {
	cfg := p.hub.cfg
	return detector.New(p.fenced, p.view, p.detectorHooks, p.hub.logger, detector.WithCounts(p.counts), detector.WithCustomizations(p.rics),
		detector.WithSkippedNamespaces(cfg.SkippedPropagatingNamespaces...), detector.WithNamespacePropagation(!cfg.NoNamespacePropagation))
}

// close releases what wire opened: the webhooks' queues, then the
// interpreter.
func (p *parts) close() {
	p.aggregateHooks.Close()
	p.detectorHooks.Close()
	p.interp.Close()
}

// replicaPrefixes are what each replica's view holds: the objects,
// bindings and clusters (view.HubPrefixes), and the records every replica
// answers from (the revoked users, the users' roles).
func replicaPrefixes() []view.Prefix {
	return append(view.HubPrefixes(), revocation.Prefix(), roles.Prefix())
}
