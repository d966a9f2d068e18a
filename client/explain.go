package client

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is an explained error of a hub call: its message says what
// happened and what to do; Unwrap gives the gRPC status error, so that
// status.Code and status.FromError read the code.
type Error struct {
	// Code is the call's gRPC status code.
	Code codes.Code
	// Advice is the explanation, the error's message.
	Advice string
	err    error
}

func (e *Error) Error() string { return e.Advice }
func (e *Error) Unwrap() error { return e.err }

// GRPCStatus keeps status.Code and status.FromError working on explained
// errors.
func (e *Error) GRPCStatus() *status.Status { s, _ := status.FromError(e.err); return s }

// Explain turns an error of a call to the hub c names into an *Error that
// says what happened and what to do; it is the one place the package and
// tetherctl read status codes for messages. Errors that carry no gRPC
// status (and nil) are returned as they are, as are those already
// explained.
func (c Config) Explain(err error) error {
	if _, done := err.(*Error); done {
		return err
	}
	st, ok := status.FromError(err)
	if err == nil || !ok {
		return err
	}
	return &Error{Code: st.Code(), Advice: c.advice(st), err: err}
}

// advice is the explanation of st.
func (c Config) advice(st *status.Status) string {
	server, user, msg := c.Address, c.User, st.Message()
	switch st.Code() {
	case codes.Unavailable:
		if strings.Contains(msg, "handshake") || strings.Contains(msg, "certificate") {
			return fmt.Sprintf("TLS with the hub at %s failed: the config's CA or certificate is not this hub's (%s)", server, msg)
		}
		return fmt.Sprintf("hub at %s unreachable: is tether-hub running? (%s)", server, msg)
	case codes.DeadlineExceeded:
		return fmt.Sprintf("hub at %s did not answer in time: is it overloaded or unreachable? (%s)", server, msg)
	case codes.Unauthenticated:
		return fmt.Sprintf("the hub at %s did not accept the client certificate: use a config the hub issued (%s)", server, msg)
	case codes.PermissionDenied:
		return fmt.Sprintf("permission denied for user %q: ask an admin for a config with the needed role (%s)", user, trimPackage(msg))
	case codes.NotFound, codes.InvalidArgument, codes.FailedPrecondition, codes.ResourceExhausted:
		return trimPackage(msg) // the hub's message names what is wrong
	case codes.Aborted:
		return "a concurrent change got in the way; retry: " + trimPackage(msg)
	case codes.OutOfRange:
		return "history compacted: start again without a revision: " + trimPackage(msg)
	case codes.Unimplemented:
		return fmt.Sprintf("the hub at %s does not serve this (is it older than this client?): %s", server, trimPackage(msg))
	case codes.Canceled:
		return "canceled"
	default:
		return fmt.Sprintf("hub error (%s): %s", st.Code(), msg)
	}
}

// trimPackage drops the server's package prefixes ("clientapi: ") that
// mean nothing to a user.
func trimPackage(msg string) string {
	return strings.ReplaceAll(msg, "clientapi: ", "")
}
