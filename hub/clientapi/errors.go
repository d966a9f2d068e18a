package clientapi

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tetherproj/tether/hub/store"
)

// Sentinel errors of the package, wrapped with what happened. grpcStatus
// turns them (and the store's) into gRPC status codes.
var (
	// ErrUnauthenticated: no verified client certificate of the hub's CA.
	ErrUnauthenticated = errors.New("clientapi: unauthenticated")
	// ErrPermissionDenied: a certificate whose role may not do this.
	ErrPermissionDenied = errors.New("clientapi: permission denied")
	// ErrInvalid: a request that cannot be served as given (unparsable
	// manifests, an unknown kind, a bad label selector ...).
	ErrInvalid = errors.New("clientapi: invalid request")
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("clientapi: not found")
	// ErrRevisionMismatch: the object is not at the expected revision.
	ErrRevisionMismatch = errors.New("clientapi: revision mismatch")
	// ErrConcurrent: another writer changed an object while Apply wrote;
	// nothing of the request stayed written and the client may retry.
	ErrConcurrent = errors.New("clientapi: concurrent change")
	// ErrPrecondition: the request needs a state that is not there (an
	// Approve without a pending key, or of another key).
	ErrPrecondition = errors.New("clientapi: precondition failed")
	// ErrFellBehind: a watcher read nothing while its buffer was full for
	// longer than the hub waits; it watches again from its last revision.
	ErrFellBehind = errors.New("clientapi: watcher fell behind")
	// ErrUnimplemented: the method belongs to a later issue.
	ErrUnimplemented = errors.New("clientapi: not implemented yet")
)

// grpcStatus maps an error to the status the client sees; nil stays nil.
// It is the only place in the package that makes status codes (STYLE 5).
func grpcStatus(err error) error {
	var code codes.Code
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnauthenticated):
		code = codes.Unauthenticated
	case errors.Is(err, ErrPermissionDenied):
		code = codes.PermissionDenied
	case errors.Is(err, ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, ErrNotFound), errors.Is(err, store.ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, ErrRevisionMismatch), errors.Is(err, ErrPrecondition):
		code = codes.FailedPrecondition
	case errors.Is(err, ErrConcurrent), errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrExists):
		code = codes.Aborted
	case errors.Is(err, store.ErrCompacted):
		code = codes.OutOfRange
	case errors.Is(err, store.ErrTooLarge), errors.Is(err, ErrFellBehind):
		code = codes.ResourceExhausted
	case errors.Is(err, ErrUnimplemented):
		code = codes.Unimplemented
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	default:
		code = codes.Internal
	}
	return status.Error(code, err.Error())
}
