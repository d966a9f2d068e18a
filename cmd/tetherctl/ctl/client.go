package ctl

// The connection to a hub, shared by every online command: the --config
// flag, dial and explain, both through the public client package, which
// turns gRPC status codes into messages that say what to do.

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/tetherproj/tether/client"
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
		"client config file (default $"+client.ConfigEnvVar+", then ~/.tether/config)")
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
// and connects to its hub with the client package, which checks that the
// hub answers and explains why when it does not. The caller closes the
// connection.
func dial(ctx context.Context) (*grpc.ClientConn, *client.Config, error) {
	c, err := dialClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	cfg := c.Config()
	return c.Conn(), &cfg, nil
}

// dialClient is dial for the client package's typed calls; the caller
// closes the client.
func dialClient(ctx context.Context) (*client.Client, error) {
	flag, _ := ctx.Value(configKey{}).(string)
	path, err := client.ConfigPath(flag)
	if err != nil {
		return nil, fmt.Errorf("no config: pass --config or set %s; the hub writes DATA_DIR/admin.conf (%v)", client.ConfigEnvVar, err)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no config at %s: pass --config or set %s; the hub writes DATA_DIR/admin.conf", path, client.ConfigEnvVar)
	}
	cfg, err := client.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(ctx, cfg)
	var explained *client.Error
	if errors.As(err, &explained) {
		return nil, err // what the hub said, explained
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// explain turns an RPC error into a message that says what happened and
// what to do (client.Config.Explain); the gRPC status stays reachable
// through errors.As (and so status.Code).
func explain(cfg *client.Config, err error) error {
	if cfg == nil {
		return client.Config{}.Explain(err)
	}
	return cfg.Explain(err)
}
