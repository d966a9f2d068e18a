package agentapi

import (
	"context"
	"errors"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Sentinel errors of the service, wrapped with what happened; grpcStatus
// and goodbyeFor map them to what the agent sees.
var (
	// ErrUnauthenticated: no verified client certificate.
	ErrUnauthenticated = errors.New("agentapi: unauthenticated")
	// ErrPermissionDenied: a certificate that is not an agent's.
	ErrPermissionDenied = errors.New("agentapi: permission denied")
	// ErrProtocol: the agent broke the protocol (e.g. no Hello first).
	ErrProtocol = errors.New("agentapi: protocol error")
	// ErrLimit: a limit of Settings.limits was exceeded.
	ErrLimit = errors.New("agentapi: limit exceeded")
	// ErrSuperseded: a newer stream of the same cluster took over.
	ErrSuperseded = errors.New("agentapi: superseded")
	// ErrShutdown: the hub is shutting down.
	ErrShutdown = errors.New("agentapi: hub shutting down")
	// ErrUnavailable: a dependency (works, statuses) failed.
	ErrUnavailable = errors.New("agentapi: unavailable")
	// ErrInvalid: a registration that cannot be served as given (cluster
	// name, CSR).
	ErrInvalid = errors.New("agentapi: invalid request")
	// ErrPendingApproval: the cluster name is registered with another key.
	ErrPendingApproval = errors.New("agentapi: new key awaits approval")
	// ErrRevoked: the certificate's cluster was removed, or its key
	// replaced; the agent is told CLUSTER_REMOVED and does not reconnect.
	ErrRevoked = errors.New("agentapi: certificate revoked")
	// ErrUnimplemented: the hub was built without a registry.
	ErrUnimplemented = errors.New("agentapi: not implemented")
)

// grpcStatus maps an error that ends a stream to the gRPC status returned
// to the agent; nil stays nil. It is the one place that makes codes.
func grpcStatus(err error) error {
	code := codes.Internal
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrUnauthenticated):
		code = codes.Unauthenticated
	case errors.Is(err, ErrPermissionDenied), errors.Is(err, ErrRevoked):
		code = codes.PermissionDenied
	case errors.Is(err, ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, ErrPendingApproval):
		code = codes.FailedPrecondition
	case errors.Is(err, ErrUnimplemented):
		code = codes.Unimplemented
	case errors.Is(err, ErrProtocol):
		code = codes.InvalidArgument
	case errors.Is(err, ErrLimit):
		code = codes.ResourceExhausted
	case errors.Is(err, ErrSuperseded):
		code = codes.Aborted
	case errors.Is(err, ErrShutdown), errors.Is(err, ErrUnavailable):
		code = codes.Unavailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	default:
		if _, ok := status.FromError(err); ok {
			return err // a gRPC transport error, as it is
		}
	}
	return status.Error(code, err.Error())
}

// goodbyeFor returns the Goodbye the hub sends before ending a stream with
// err, or nil when the agent is not told (it left, or the hub failed).
func goodbyeFor(err error) *agentv1.HubMessage {
	reason := agentv1.DisconnectReason_DISCONNECT_REASON_UNSPECIFIED
	switch {
	case errors.Is(err, ErrProtocol):
		reason = agentv1.DisconnectReason_DISCONNECT_REASON_PROTOCOL_ERROR
	case errors.Is(err, ErrLimit):
		reason = agentv1.DisconnectReason_DISCONNECT_REASON_LIMIT_EXCEEDED
	case errors.Is(err, ErrSuperseded):
		reason = agentv1.DisconnectReason_DISCONNECT_REASON_SUPERSEDED
	case errors.Is(err, ErrShutdown):
		reason = agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN
	case errors.Is(err, ErrRevoked):
		reason = agentv1.DisconnectReason_DISCONNECT_REASON_CLUSTER_REMOVED
	default:
		return nil
	}
	g := &agentv1.Goodbye{Reason: reason, Message: err.Error()}
	var wait retryAfter
	if errors.As(err, &wait) {
		g.RetryAfter = durationpb.New(wait.after)
	}
	return &agentv1.HubMessage{Message: &agentv1.HubMessage_Goodbye{Goodbye: g}}
}

// retryAfter is an error whose Goodbye tells the agent how long to wait
// before reconnecting.
type retryAfter struct {
	err   error
	after time.Duration
}

func (r retryAfter) Error() string { return r.err.Error() }
func (r retryAfter) Unwrap() error { return r.err }
