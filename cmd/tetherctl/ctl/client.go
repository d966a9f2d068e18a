package ctl

// The connection to a hub, shared by every online command: the --config
// flag and dial, through the public client package, whose typed calls turn
// gRPC status codes into messages that say what to do.

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

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
// hub answers and explains why when it does not. Every call a command
// makes goes through the returned client's typed methods, whose errors are
// explained; the caller closes it.
func dial(ctx context.Context) (*client.Client, error) {
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
