package agentapi

import (
	"context"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/syncstate"
)

// Statuses receives what agents report about their works: the aggregator
// implements it. The cluster is always the one of the stream's certificate,
// and only current versions arrive (stale acks and reports are discarded
// before). An error ends the stream with Unavailable; the agent's reconnect
// then sends its status digests and the hub asks again for what it lacks.
type Statuses interface {
	// Ack records the apply result of a work version (or of a deletion).
	Ack(ctx context.Context, cluster string, ack *agentv1.Ack) error
	// Report records the observed status of a work version.
	Report(ctx context.Context, cluster string, report *agentv1.StatusReport) error
	// Digests returns the status digests the hub holds for the cluster's
	// works, by work key, so a reconnecting agent is asked (StatusRequest)
	// only for those that differ.
	Digests(ctx context.Context, cluster string) (map[string]syncstate.Digest, error)
}

// Leases receives heartbeats: hub/liveness.Leases implements it.
type Leases interface {
	// Heartbeat renews the cluster's lease with its capacity and conditions.
	Heartbeat(cluster string, hb *agentv1.Heartbeat)
}

// Toucher is implemented by a Leases that can keep a cluster's lease
// valid without a heartbeat (hub/liveness): the hub touches the lease of a
// cluster whose agent's stream it holds back unread (its works not ready
// after a restart, or no place yet among the Hellos in progress), so that
// its own backlog never makes a connected agent look gone.
type Toucher interface {
	// Touch keeps the cluster's lease valid from now if it is valid.
	Touch(cluster string)
}

// HeartbeatChecker is implemented by a Leases that bounds the heartbeats it
// holds (hub/liveness): a heartbeat it refuses is not handed over, and the
// stream ends with ResourceExhausted saying why.
type HeartbeatChecker interface {
	// CheckHeartbeat says why hb is past the bounds, or nil.
	CheckHeartbeat(hb *agentv1.Heartbeat) error
}
