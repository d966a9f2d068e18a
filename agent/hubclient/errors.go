package hubclient

import "errors"

// Sentinel errors of the client, wrapped with what happened.
var (
	// ErrProtocol: the hub broke the protocol (e.g. a WorkUpsert before
	// Welcome). The stream is closed and opened again with backoff.
	ErrProtocol = errors.New("hubclient: protocol error")
	// ErrClusterRemoved: the hub said Goodbye CLUSTER_REMOVED; the
	// cluster's credentials are revoked and the client does not reconnect.
	ErrClusterRemoved = errors.New("hubclient: cluster removed from the hub")
)
