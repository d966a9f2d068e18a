package ctl

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetherproj/tether/client"
)

func init() { commands = append(commands, newKubeconfig) }

// newKubeconfig writes a kubeconfig for the hub's member proxy: a printer
// over client.Config.Kubeconfig.
func newKubeconfig(s IO) *cobra.Command {
	var clusters, proxy, output string
	cmd := &cobra.Command{
		Use:   "kubeconfig --cluster NAME[,NAME...]",
		Short: "write a kubeconfig with which kubectl reaches member clusters through the hub's member proxy",
		Long: "Writes a kubeconfig (to stdout, or --output) with one context per cluster, each reaching that member's Kubernetes API " +
			"through the hub (tether-hub --proxy-listen) and the cluster's agent, with your credentials file's certificate. " +
			"The member sees you as tether:<user> in the groups tether:users and tether:role:<role>: its RBAC decides, and its agent " +
			"may allow reads only (tether-agent --member-proxy). Hub viewers may read, never exec, attach or port-forward.",
		Example: "  tetherctl kubeconfig --cluster edge-1 > edge-1.kubeconfig\n  KUBECONFIG=edge-1.kubeconfig kubectl get pods -A",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(contextOf(cmd))
			if err != nil {
				return err
			}
			data, err := cfg.Kubeconfig(proxy, strings.Split(clusters, ",")...)
			if err != nil {
				return err
			}
			if output == "" {
				_, err = s.Out.Write(data)
				return err
			}
			return os.WriteFile(output, data, 0o600)
		},
	}
	cmd.Flags().StringVar(&clusters, "cluster", "", "the cluster(s), comma-separated; the first is the current context (required)")
	cmd.Flags().StringVar(&proxy, "proxy", "", "the hub's member proxy address, host:port (tether-hub --proxy-listen); default: the hub's host, port "+client.DefaultProxyPort)
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file (mode 0600) instead of stdout")
	_ = cmd.MarkFlagRequired("cluster")
	return cmd
}

// loadConfig reads the client config (--config, $TETHER_CONFIG,
// ~/.tether/config) without dialing the hub.
func loadConfig(ctx context.Context) (client.Config, error) {
	flag, _ := ctx.Value(configKey{}).(string)
	path, err := client.ConfigPath(flag)
	if err != nil {
		return client.Config{}, fmt.Errorf("no config: pass --config or set %s (%v)", client.ConfigEnvVar, err)
	}
	return client.LoadConfig(path)
}
