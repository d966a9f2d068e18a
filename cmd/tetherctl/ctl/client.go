package ctl

// The connection to a hub, shared by every online command: the --config
// flag, dial, and explain, the one place that turns gRPC status codes into
// messages that say what to do.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/tetherproj/tether/internal/clientconfig"
)

// Tuned limits of the client connection.
const (
	// connectTimeout bounds one attempt to reach the hub, so that a hub
	// behind a black-holed address fails a command in seconds, not after
	// the kernel's TCP timeout.
	connectTimeout = 5 * time.Second
	// maxRecvBytes is the largest response accepted: 64 MiB, room for a
	// List page of large objects (gRPC's default is 4 MiB).
	maxRecvBytes = 64 << 20
)

func init() { rootHooks = append(rootHooks, addConfigFlag) }

// configKey is the context key under which the root's PersistentPreRunE
// stores the --config value for dial.
type configKey struct{}

// addConfigFlag adds the persistent --config flag to root. The value
// travels in the command's context rather than a package variable so that
// concurrent in-process runs do not share it.
func addConfigFlag(root *cobra.Command, _ IO) {
	var path string
	root.PersistentFlags().StringVar(&path, "config", "",
		"client config file (default $"+clientconfig.EnvVar+", then ~/.tether/config)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		cmd.SetContext(context.WithValue(contextOf(cmd), configKey{}, path))
		return nil
	}
}

// contextOf returns cmd's context, or Background when it has none (a
// command executed without ExecuteContext).
func contextOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// dial reads the client config (--config, $TETHER_CONFIG, ~/.tether/config)
// and returns a connection to its hub over mutual TLS. The connection is
// lazy: an unreachable hub shows on the first call, whose error explain
// turns into advice. The caller closes the connection.
func dial(ctx context.Context) (*grpc.ClientConn, *clientconfig.Config, error) {
	flag, _ := ctx.Value(configKey{}).(string)
	path, err := clientconfig.Path(flag)
	if err != nil {
		return nil, nil, fmt.Errorf("no config: pass --config or set %s; the hub writes DATA_DIR/admin.conf (%v)", clientconfig.EnvVar, err)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("no config at %s: pass --config or set %s; the hub writes DATA_DIR/admin.conf", path, clientconfig.EnvVar)
	}
	cfg, err := clientconfig.Load(path)
	if err != nil {
		return nil, nil, err
	}
	tlsCfg, err := cfg.TLS()
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := cfg.CheckExpiry(time.Now()); err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", path, err)
	}
	conn, err := grpc.NewClient(cfg.Server,
		grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: connectTimeout}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvBytes)),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("hub address %q in %s: %w", cfg.Server, path, err)
	}
	return conn, cfg, nil
}

// explain turns an RPC error into a message that says what happened and
// what to do; the gRPC status stays reachable through errors.As (and so
// status.Code). It is the only place tetherctl reads status codes for
// messages.
func explain(cfg *clientconfig.Config, err error) error {
	st, ok := status.FromError(err)
	if err == nil || !ok {
		return err
	}
	server, user := "", ""
	if cfg != nil {
		server, user = cfg.Server, cfg.User
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable:
		if strings.Contains(msg, "handshake") || strings.Contains(msg, "certificate") {
			return &rpcError{err, fmt.Sprintf("TLS with the hub at %s failed: the config's CA or certificate is not this hub's (%s)", server, msg)}
		}
		return &rpcError{err, fmt.Sprintf("hub at %s unreachable: is tether-hub running? (%s)", server, msg)}
	case codes.DeadlineExceeded:
		return &rpcError{err, fmt.Sprintf("hub at %s did not answer in time: is it overloaded or unreachable? (%s)", server, msg)}
	case codes.Unauthenticated:
		return &rpcError{err, fmt.Sprintf("the hub at %s did not accept the client certificate: use a config the hub issued (%s)", server, msg)}
	case codes.PermissionDenied:
		return &rpcError{err, fmt.Sprintf("permission denied for user %q: ask an admin for a config with the needed role (%s)", user, trimPackage(msg))}
	case codes.NotFound, codes.InvalidArgument, codes.FailedPrecondition, codes.ResourceExhausted:
		return &rpcError{err, trimPackage(msg)} // the hub's message names what is wrong
	case codes.Aborted:
		return &rpcError{err, "a concurrent change got in the way; retry: " + trimPackage(msg)}
	case codes.OutOfRange:
		return &rpcError{err, "history compacted: start again without a revision: " + trimPackage(msg)}
	case codes.Unimplemented:
		return &rpcError{err, fmt.Sprintf("the hub at %s does not serve this (is it older than tetherctl?): %s", server, trimPackage(msg))}
	case codes.Canceled:
		return &rpcError{err, "canceled"}
	default:
		return &rpcError{err, fmt.Sprintf("hub error (%s): %s", st.Code(), msg)}
	}
}

// rpcError is an explained RPC error: Error is the advice, Unwrap the
// original status error.
type rpcError struct {
	err error
	msg string
}

func (e *rpcError) Error() string { return e.msg }
func (e *rpcError) Unwrap() error { return e.err }

// GRPCStatus keeps status.Code and status.FromError working on explained
// errors.
func (e *rpcError) GRPCStatus() *status.Status { s, _ := status.FromError(e.err); return s }

// trimPackage drops the server's package prefixes ("clientapi: ") that
// mean nothing to a user.
func trimPackage(msg string) string {
	return strings.ReplaceAll(msg, "clientapi: ", "")
}
