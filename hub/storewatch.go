package hub

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
	// storeLossGrace is how long no read may succeed before the replica
	// sends its agents to other replicas: as long as the leader TTL, so a
	// replica cut off etcd gives up its agents about when it gives up
	// leading, well inside the clusters' 40 s lease, and an etcd leader
	// election (a second or two) moves nobody.
	storeLossGrace = 10 * time.Second
)

// storeWatch tells when this replica has lost its store and when it has it
// again: a replica that cannot reach etcd can neither send its agents the
// works rendered elsewhere nor publish their heartbeats, so it hands them
// over (agentapi Suspend) and reports not ready, until a read succeeds.
//
// A hub alone on its embedded etcd hands nothing over: there is no other
// replica its agents could go to, and its store is in its own process, so
// a read that does not come back means the process (CPU, disk) is too slow,
// never that the store is out of reach. Sending every agent away would only
// make them all reconnect to the same process at once and slow it further.
// It logs the loss and its end, stays ready and keeps serving: agents keep
// what they hold either way, and get what the hub manages to send.
type storeWatch struct {
	probe func(ctx context.Context) error
	// alone: the store is this process's embedded etcd (no other replica):
	// lost and found are never called.
	alone bool
	lost  func(why string) // called once when the store is lost
	found func()           // called once when it answers again
	log   hclog.Logger
}

// run probes until ctx ends.
func (w storeWatch) run(ctx context.Context) error {
	var s storeState
	s.reset(time.Now())
	ticker := time.NewTicker(storeProbeInterval)
	defer ticker.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, storeProbeTimeout)
		err := w.probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		w.act(s.observe(err == nil, time.Now()), err)
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// act does what a probe's transition asks.
func (w storeWatch) act(t transition, err error) {
	switch {
	case t == storeLost && w.alone:
		w.log.Error("store lost: keeping every agent, as this hub's store is its own embedded etcd and no other replica could serve them",
			"grace", storeLossGrace, "error", err)
	case t == storeLost:
		why := fmt.Sprintf("this hub replica has not reached its store (etcd) for %s: %v", storeLossGrace, err)
		w.log.Error("store lost: sending this replica's agents to other replicas", "error", err)
		w.lost(why)
	case t == storeFound && w.alone:
		w.log.Info("store answers again")
	case t == storeFound:
		w.log.Info("store reachable again: serving agents")
		w.found()
	}
}

// storeState is the watch's decision, apart from time and I/O.
type storeState struct {
	lastOK time.Time
	down   bool
}

// transition is what one probe changes.
type transition int

const (
	storeSame transition = iota
	storeLost
	storeFound
)

func (s *storeState) reset(now time.Time) { s.lastOK, s.down = now, false }

// observe records one probe's result at now.
func (s *storeState) observe(ok bool, now time.Time) transition {
	switch {
	case ok && s.down:
		s.reset(now)
		return storeFound
	case ok:
		s.lastOK = now
	case !s.down && now.Sub(s.lastOK) >= storeLossGrace:
		s.down = true
		return storeLost
	}
	return storeSame
}
