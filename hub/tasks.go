package hub

import (
	"context"

	"github.com/tetherproj/tether/hub/leader"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/rebalancer"
)

// task is one long-lived part of the hub.
type task struct {
	name string
	run  func(ctx context.Context) error
	on   runsOn
}

// runsOn says which replicas run a task.
type runsOn int

const (
	// everyReplica: the task runs from start to stop on every replica.
	everyReplica runsOn = iota
	// leaderOnly: the task runs only while this replica leads, and writes
	// its decisions through the fenced store.
	leaderOnly
)

// tasks is the hub's table of tasks, what each turns into what. It is
// built again for each term of leadership, so that the registrar and the
// detector start every term anew.
func (p *parts) tasks() []task {
	t := []task{
		{"authority", p.auth.Run, everyReplica},                           // store revision and checkpoint → record next to the CA
		{"leases", p.leases.Run, everyReplica},                            // liveness records → cluster liveness
		{"liveness", p.heartbeats.Run, everyReplica},                      // this replica's agents' heartbeats → liveness records
		{"liveness-follow", p.followLiveness, everyReplica},               // every replica's liveness records → this replica's leases
		{"reports", p.statuses.Relay, everyReplica},                       // this replica's agents' acks and reports → /tether/reports/ → every replica's aggregator
		{"customizations", p.rics.Run, everyReplica},                      // stored RICs and webhooks → interpreter
		{"view", p.view.Run, everyReplica},                                // the store → this replica's decoded, indexed view
		{"render", p.works.Run, everyReplica},                             // placements → works, served to agents
		{"revocation", p.revoke, everyReplica},                            // agent records → revoked streams ended
		{"grpc", p.srv.serve(p.lis.grpc), everyReplica},                   // agents and clients, one port
		{"cluster-models", p.srv.models.Run, everyReplica},                // clusters' resource models → their agents' Settings
		{"user-revocations", p.srv.revoked.Run, everyReplica},             // revoked users → their certificates refused on every call
		{"user-roles", p.srv.roles.Run, everyReplica},                     // users' stored roles → every call decided with them, open streams narrowed
		{"store-watch", p.storeLoss.Run, everyReplica},                    // external etcd out of reach → agents sent to other replicas, not ready
		{"serving", p.srv.cert.Run, everyReplica},                         // serving certificate re-issued before it expires
		{"admin.conf", p.hub.adminConf(p.ca, p.addr()).Run, everyReplica}, // admin.conf's certificate renewed before it expires
		// While this replica leads, through the fenced store:
		{"registration", p.newRegistrar().Run, leaderOnly}, // first heartbeat → /tether/clusters/<name>
		{"detector", p.newDetector().Run, leaderOnly},      // templates × policies → bindings
		{"scheduler", p.sched.Run, leaderOnly},             // bindings × clusters → placements, eviction
		{"aggregate", p.statuses.Run, leaderOnly},          // agents' statuses → binding status
		{"reports-prune", p.statuses.Prune, leaderOnly},    // removed clusters' relayed reports → deleted
		{"rebalancer", p.rebalance, leaderOnly},            // WorkloadRebalancers → bindings' rescheduleTriggeredAt, their status, TTL
		{"rollout", p.newRollout().Run, leaderOnly},        // RolloutPolicies × agents' health → rollout records (render holds the rest)
	}
	if p.lis.metrics != nil {
		t = append(t, task{"metrics", p.srv.metrics.serveHTTP(p.lis.metrics), everyReplica}) // /healthz, /readyz, /metrics
	}
	if p.lis.proxy != nil {
		t = append(t, task{"member-proxy", p.srv.serveProxy(p.lis.proxy, p.ca), everyReplica}) // users' HTTPS → tunnels → members' API servers
	}
	return t
}

// start runs table's tasks on g: every replica's at once, and the
// leader-only ones, from a table built again, in a group of their own for
// each term this replica leads, which ends as soon as leadership is lost
// (task "leader", hub/leader). A single hub on its embedded etcd leads
// from the start until it stops.
func start(g *group, table func() []task, elector *leader.Elector) {
	for _, t := range table() {
		if t.on == everyReplica {
			g.run(t.name, t.run)
		}
	}
	g.run("leader", func(ctx context.Context) error {
		return elector.Run(ctx, func(ctx context.Context) error { // one term; ctx ends when it is lost
			term := newGroup(ctx, g.logger, g.counts)
			for _, t := range table() {
				if t.on == leaderOnly {
					term.run(t.name, t.run)
				}
			}
			return term.wait()
		})
	})
}

// followLiveness follows every replica's liveness records into this
// replica's leases.
func (p *parts) followLiveness(ctx context.Context) error {
	return liveness.Follow(ctx, p.st, p.leases, p.hub.logger)
}

// revoke ends the streams of agents whose records were revoked or
// removed.
func (p *parts) revoke(ctx context.Context) error { return p.registry.Watch(ctx, p.srv.agents.Recheck) }

// rebalance runs a term's WorkloadRebalancer loop (hub/rebalancer).
func (p *parts) rebalance(ctx context.Context) error {
	return rebalancer.New(p.fenced, p.view, p.hub.logger).Run(ctx)
}
