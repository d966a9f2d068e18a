package tokens

import "errors"

// Sentinel errors, wrapped with what happened. The agent and client APIs
// map them to gRPC codes.
var (
	// ErrMalformed: a token that does not have the token format.
	ErrMalformed = errors.New("tokens: malformed token")
	// ErrRefused: an unknown, expired or used-up token, a wrong secret, or
	// a token bound to another cluster name.
	ErrRefused = errors.New("tokens: token refused")
	// ErrInvalid: a request that cannot be served as given (a bad cluster
	// name, CSR, lifetime or use count).
	ErrInvalid = errors.New("tokens: invalid request")
	// ErrNotFound: no such token or cluster.
	ErrNotFound = errors.New("tokens: not found")
	// ErrPendingApproval: the cluster name is bound to another key; the new
	// one is recorded and waits for Approve.
	ErrPendingApproval = errors.New("tokens: new key awaits approval")
	// ErrNoPending: Approve found no pending key, or another one.
	ErrNoPending = errors.New("tokens: no such pending key")
	// ErrRevoked: a certificate of a removed cluster, or of a key that is no
	// longer the one its cluster name is bound to.
	ErrRevoked = errors.New("tokens: certificate revoked")
	// ErrConflict: a concurrent change won; the caller may retry.
	ErrConflict = errors.New("tokens: concurrent change")
)
