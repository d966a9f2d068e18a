package security

import (
	"context"
	"fmt"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/liveness"
)

// The probe times a heartbeat by what the hub makes of it: a heartbeat
// that turns a bystander Ready if it was NotReady, or back, is written to
// etcd at once (hub/liveness.Publisher) and shows in GetCluster; other
// heartbeats wait for the next write of the cluster's record. But the hub
// writes a cluster's state change at once only if no other one was,
// within liveness.DefaultContentInterval (10 s): a later one waits for the
// interval, by design (coalescing). So the probe goes round several
// bystanders and times a heartbeat only on one whose last timed change is
// older than bystanderRest; the bystanders hold no work: their state moves
// nothing.
const (
	// bystanderRest is how long a bystander rests between two timed
	// heartbeats: the hub's content interval and a margin for the time
	// between the probe's send and the hub's write.
	bystanderRest = liveness.DefaultContentInterval + 500*time.Millisecond
	// bystanderSource is the first address bystanders register from, 10
	// from each (the per-source burst of registrations) on from it.
	bystanderSource = 10
	// perSource is how many bystanders register from one address.
	perSource = 10
)

// bystander is a healthy cluster whose stream stays up.
type bystander struct {
	name  string
	s     *agentStream
	ready bool      // the state of its last heartbeat
	timed time.Time // when its last timed heartbeat was sent
}

// startBystanders registers n bystanders, the first bystanderCluster, the
// others bystanderCluster-N, from 127.0.0.10 on, and opens their streams.
func (e *hostileEnv) startBystanders(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		name := bystanderCluster
		if i > 0 {
			name = fmt.Sprintf("%s-%d", bystanderCluster, i)
		}
		reg, err := registerFrom(t, e.h, e.tok, name, nil, fmt.Sprintf("127.0.0.%d", bystanderSource+i/perSource))
		if err != nil {
			t.Fatalf("register bystander %s: %v", name, err)
		}
		s, err := openStream(t, e.h, reg)
		if err != nil {
			t.Fatalf("open bystander %s's stream: %v", name, err)
		}
		e.bystanders = append(e.bystanders, &bystander{name: name, s: s})
	}
}

// restedBystander is the bystander that rested longest, and how long it
// must still rest.
func (e *hostileEnv) restedBystander() (*bystander, time.Duration) {
	b := e.bystanders[0]
	for _, o := range e.bystanders[1:] {
		if o.timed.Before(b.timed) {
			b = o
		}
	}
	return b, time.Until(b.timed.Add(bystanderRest))
}

// heartbeatRead sends a heartbeat of agent version version on a rested
// bystander's stream, flipping its state, and returns how long the hub took
// to read it: until GetCluster shows the version. If wait is set, it waits
// for a rested bystander (the wait is not timed); otherwise it sends
// nothing and returns false when no bystander has rested, or when the
// last timed heartbeat is more recent than bystanderRest divided by the
// number of bystanders: at that pace the bystanders rest as fast as they
// are used, so that a heartbeat that waits (the next probe's first,
// checkServing's) waits for one at most that long.
func (e *hostileEnv) heartbeatRead(ctx context.Context, version string, wait bool) (time.Duration, bool, error) {
	if !wait && time.Since(e.lastTimed) < bystanderRest/time.Duration(len(e.bystanders)) {
		return 0, false, nil
	}
	b, rest := e.restedBystander()
	if rest > 0 {
		if !wait {
			return 0, false, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, fmt.Errorf("bystander heartbeat %s: %w", version, ctx.Err())
		case <-time.After(rest):
		}
	}
	b.drain()
	b.ready = !b.ready
	ready := agentv1.ConditionStatus_CONDITION_STATUS_FALSE
	if b.ready {
		ready = agentv1.ConditionStatus_CONDITION_STATUS_TRUE
	}
	start := time.Now()
	b.timed, e.lastTimed = start, start
	if err := b.s.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
		AgentVersion: version, Conditions: []*agentv1.Condition{{Type: "Ready", Status: ready}},
	}}}); err != nil {
		return 0, false, fmt.Errorf("%s heartbeat %s: %w", b.name, version, err)
	}
	clusterAPI := hubv1.NewClusterServiceClient(e.viewer)
	for {
		resp, err := clusterAPI.GetCluster(ctx, &hubv1.GetClusterRequest{Name: b.name})
		if err != nil {
			return 0, false, fmt.Errorf("%s heartbeat %s: GetCluster: %w", b.name, version, err)
		}
		if resp.GetCluster().GetAgentVersion() == version {
			return time.Since(start), true, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, fmt.Errorf("%s heartbeat %s: not read by the hub: %w", b.name, version, ctx.Err())
		case <-time.After(heartbeatPollInterval):
		}
	}
}

// drain drops what the hub sent the bystander since, so that its stream's
// reader never blocks.
func (b *bystander) drain() {
	for {
		select {
		case _, ok := <-b.s.msgs:
			if !ok {
				return
			}
		default:
			return
		}
	}
}
