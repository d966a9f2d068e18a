package membership

import "errors"

// Sentinel errors, wrapped with what happened. The agent and client APIs
// map them to gRPC codes.
var (
	// ErrMalformed: a token that does not have the token format.
	ErrMalformed = errors.New("membership: malformed token")
	// ErrRefused: an unknown, expired or used-up token, a wrong secret, or
	// a token bound to another cluster name.
	ErrRefused = errors.New("membership: token refused")
	// ErrInvalid: a request that cannot be served as given (a bad cluster
	// name, CSR, lifetime or use count).
	ErrInvalid = errors.New("membership: invalid request")
	// ErrNotFound: no such token or cluster.
	ErrNotFound = errors.New("membership: not found")
	// ErrPendingApproval: the cluster name is bound to another key; the new
	// one is recorded and waits for Approve.
	ErrPendingApproval = errors.New("membership: new key awaits approval")
	// ErrNoPending: Approve found no pending key, or another one.
	ErrNoPending = errors.New("membership: no such pending key")
	// ErrRevoked: a certificate of a removed cluster, or of a key that is no
	// longer the one its cluster name is bound to.
	ErrRevoked = errors.New("membership: certificate revoked")
	// ErrConflict: a concurrent change won; the caller may retry.
	ErrConflict = errors.New("membership: concurrent change")
)
