package storewatch

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Timing of the store watch.
const (
	// storeProbeInterval is how often the replica reads the store to know
	// it can reach it: one small linearizable read a second.
	storeProbeInterval = time.Second
	// storeProbeTimeout bounds one read.
	storeProbeTimeout = 2 * time.Second
	// storeLossGrace is how long the replica's reads must keep failing,
	// each on time, before it sends its agents to other replicas: as long
	// as the leader TTL, so a replica cut off etcd gives up its agents
	// about when it gives up leading, well inside the clusters' 40 s
	// lease, and an etcd leader election (a second or two) moves nobody.
	storeLossGrace = 10 * time.Second
	// storeProbeLateness is how late this process may run a probe and
	// still count its failure as the store's: a probe that started this
	// much after it was due, returned this much after its timeout, or
	// during which the process's runnable goroutines waited this long to
	// run (storeProbeWaitQuantile of them), says the process did not get
	// the CPU to see etcd's answer, not that etcd did not give one.
	// 250 ms is an eighth of the timeout: far above what a timer or a
	// goroutine waits in a process that runs (a millisecond or so, tens
	// on a loaded machine), far below what a starved one waits.
	storeProbeLateness = 250 * time.Millisecond
	// storeProbeWaitQuantile is which of the goroutines' scheduling waits
	// during a probe is compared with storeProbeLateness: the 90th
	// percentile, so that a few slow wake-ups in a process that runs do
	// not void the evidence, and a process whose goroutines mostly wait
	// does.
	storeProbeWaitQuantile = 0.9
)

// Watch tells when this replica has lost its store and when it has it
// again: a replica that cannot reach etcd can neither send its agents the
// works rendered elsewhere nor publish their heartbeats, so it hands them
// over (agentapi.Server.Suspend) and reports not ready, until a read succeeds.
//
// A store is lost only on evidence: reads that failed one after the other
// for storeLossGrace, each run on time by a process that was running. A
// process starved of CPU (too much work for its share: thousands of agents
// on a small machine, a container's CPU limit) runs its probes late and
// its goroutines wait to run; its reads time out because it cannot take
// etcd's answers, and handing its agents over would only start a
// reconnect storm that starves it further. Such a failed probe is no
// evidence: it does not count toward the grace, and the evidence starts
// again with the next probe that runs on time (a success, late or not,
// finds the store). A real partition (etcd stopped, its packets dropped)
// leaves the process idle and its probes on time, so it is declared as
// soon as before: by the first failed probe that ends storeLossGrace after
// the first of them started. The connection's state is not evidence
// either way: without keepalives (whose minimum period is 10 s in gRPC) a
// connection whose packets are dropped stays READY.
//
// A hub alone on its embedded etcd hands nothing over: there is no other
// replica its agents could go to, and its store is in its own process, so
// a read that does not come back means the process (CPU, disk) is too slow,
// never that the store is out of reach. Sending every agent away would only
// make them all reconnect to the same process at once and slow it further.
// It logs the loss and its end, stays ready and keeps serving: agents keep
// what they hold either way, and get what the hub manages to send.
type Watch struct {
	// Probe reads the store once (the store's Reachable: a linearizable
	// read).
	Probe func(ctx context.Context) error
	// Alone: the store is this process's embedded etcd (no other replica):
	// Lost and Found are never called.
	Alone bool
	Lost  func(why string)          // called once when the store is lost
	Found func(ctx context.Context) // called once when it answers again
	Log   hclog.Logger
}

// Run probes until ctx ends.
func (w Watch) Run(ctx context.Context) error {
	var s storeState
	waits := newSchedWaits()
	timer := time.NewTimer(0)
	defer timer.Stop()
	due := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		p, err := w.probeOnce(ctx, due, waits)
		if ctx.Err() != nil {
			return nil
		}
		w.act(ctx, s.observe(p), p, err)
		due = p.start.Add(storeProbeInterval)
		if due.Before(p.end) {
			due = p.end
		}
		timer.Reset(time.Until(due))
	}
}

// probeOnce reads the store once, due at due, and says how it went.
func (w Watch) probeOnce(ctx context.Context, due time.Time, waits *schedWaits) (probe, error) {
	waits.reset()
	p := probe{due: due, start: time.Now()}
	pctx, cancel := context.WithTimeout(ctx, storeProbeTimeout)
	err := w.Probe(pctx)
	cancel()
	p.end, p.ok = time.Now(), err == nil
	p.waited = waits.quantile(storeProbeWaitQuantile)
	return p, err
}

// act does what a probe's transition asks.
func (w Watch) act(ctx context.Context, t transition, p probe, err error) {
	switch {
	case t == storeStarved:
		w.Log.Warn("store probe failed while this process ran late (starved of CPU?): not counted as the store's loss",
			"late", p.late().Round(time.Millisecond), "error", err)
	case t == storeLost && w.Alone:
		w.Log.Error("store lost: keeping every agent, as this hub's store is its own embedded etcd and no other replica could serve them",
			"grace", storeLossGrace, "error", err)
	case t == storeLost:
		why := fmt.Sprintf("this hub replica has not reached its store (etcd) for %s: %v", storeLossGrace, err)
		w.Log.Error("store lost: sending this replica's agents to other replicas", "error", err)
		w.Lost(why)
	case t == storeFound && w.Alone:
		w.Log.Info("store answers again")
	case t == storeFound:
		w.Log.Info("store reachable again: serving agents once this replica has caught up with it")
		w.Found(ctx)
	}
}

// storeCatchUpTimeout bounds how long a replica that found its store again
// waits to catch up with it before it serves agents again. Past it, it
// serves anyway: each stream still waits for the revision its agent has
// seen (agentapi.DefaultCatchUpTimeout) before it computes a difference.
const storeCatchUpTimeout = 30 * time.Second

// CatchUp waits until works has applied the store's current revision (or
// storeCatchUpTimeout passed), so that a replica that lagged while cut off
// does not serve its old view to the agents it takes back.
func CatchUp(ctx context.Context, revision func(context.Context) (int64, error), works interface {
	WaitApplied(context.Context, int64) bool
}, log hclog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, storeCatchUpTimeout)
	defer cancel()
	rev, err := revision(ctx)
	if err != nil {
		log.Warn("store revision not read: serving agents without waiting to catch up", "error", err)
		return
	}
	if !works.WaitApplied(ctx, rev) {
		log.Warn("not caught up with the store: serving agents anyway, each stream waits for what its agent has seen",
			"revision", rev, "waited", storeCatchUpTimeout)
	}
}
