// Package protocol holds the timing contract of the agent protocol that hub
// and agent both rely on, so the two sides cannot drift apart: each value
// is defined here once, and hub/agentapi, hub/liveness, hub/aggregate,
// hub/scheduler and agent/hubclient use it from here. The hub sends
// HeartbeatInterval and its lease duration to every agent in Settings; an
// agent falls back to HeartbeatInterval when Settings carry none. It
// imports only the standard library.
package protocol

import "time"

// Heartbeats and leases (DESIGN §5).
const (
	// HeartbeatInterval is how often an agent sends Heartbeat by default:
	// the hub's default Settings.heartbeat_interval, and the agent's when
	// Settings carry none.
	HeartbeatInterval = 10 * time.Second
	// LeaseDuration is how long a cluster stays Ready after its last
	// heartbeat by default (tether-hub --lease-duration): four heartbeats,
	// so that one or two lost heartbeats never turn a cluster Unknown.
	LeaseDuration = 4 * HeartbeatInterval
)

// MaxReconnectDelay is the longest an agent waits between two attempts to
// reach its hub (its reconnect backoff step is capped here, before jitter).
// A restarted hub keeps clusters it has not heard from yet as they were for
// its lease duration plus this delay, so that an agent whose hub was away
// for a long time reconnects before the hub would declare its cluster
// unreachable and fail its work over.
const MaxReconnectDelay = 30 * time.Second

// Keepalive of the agent's connection, on both ends: a dead connection
// behind NAT (no FIN ever arrives) is found within KeepaliveTime plus
// KeepaliveTimeout, which also unblocks a send stuck on a full window.
const (
	// KeepaliveTime is how long a connection is quiet before either end
	// pings it.
	KeepaliveTime = 30 * time.Second
	// KeepaliveTimeout is how long a ping may go unanswered before the
	// connection is closed.
	KeepaliveTimeout = 10 * time.Second
	// KeepaliveMinTime is the shortest interval between an agent's pings
	// that the hub tolerates (a faster pinger is sent GOAWAY): well under
	// KeepaliveTime, so an agent that pings as the contract says is never
	// cut off.
	KeepaliveMinTime = 10 * time.Second
)
