package lease

import (
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// State is a cluster's liveness as the hub sees it.
type State string

// The states of a cluster's lease.
const (
	// StateReady: the lease is valid and the agent reports the cluster Ready.
	StateReady State = "Ready"
	// StateNotReady: the lease is valid but the agent reports its "Ready"
	// condition False.
	StateNotReady State = "NotReady"
	// StateUnknown: no heartbeat for the lease duration.
	StateUnknown State = "Unknown"
)

// Lease is one cluster's liveness and its last reported capacity.
type Lease struct {
	// Cluster is the cluster's name (from its agent's certificate).
	Cluster string
	// State is Ready, NotReady or Unknown.
	State State
	// Since is when State last changed, as this hub observed it: a lease
	// that expired while the hub was not running turns Unknown when the hub
	// runs again (after the pause hold), not in the past.
	Since time.Time
	// LastHeartbeat is when the last heartbeat arrived.
	LastHeartbeat time.Time
	// Heartbeat is the last heartbeat: capacity, conditions, versions,
	// topology. Callers must not modify it.
	Heartbeat *agentv1.Heartbeat
}
