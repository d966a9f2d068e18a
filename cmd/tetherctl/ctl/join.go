package ctl

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/durationpb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/deploy"
	"github.com/tetherproj/tether/internal/hubaddr"
	"github.com/tetherproj/tether/internal/version"
)

func init() { commands = append(commands, newJoin) }

// Defaults of join.
const (
	// joinDefaultTTL is how long a join token lasts: long enough to copy a
	// command to another machine, short enough that a leaked one is soon
	// useless.
	joinDefaultTTL = time.Hour
	// Output forms of join besides text and json.
	formatManifest = "manifest"
	formatHelm     = "helm"
	// agentDataDir and agentKubeconfig are the paths the printed command
	// uses; the user edits them if theirs differ.
	agentDataDir    = "/var/lib/tether-agent"
	agentKubeconfig = "~/.kube/config"
)

const joinLong = `Prepares member cluster NAME to join the hub: issues a single-use
bootstrap token bound to NAME (valid for --ttl) and prints how to start the
agent with it. The agent dials the hub; nothing needs to reach the cluster.

Text output is the tether-agent command to run on a machine with the
cluster's kubeconfig. -o manifest prints instead a ready-to-apply YAML that
runs the agent inside the cluster (namespace tether-system, RBAC, the token
in a Secret, a Deployment and a volume claim for its state):

  tetherctl join edge-1 -o manifest | kubectl --context edge-1 apply -f -

-o helm prints the same as a helm install of the tether-agent chart
(deploy/charts/tether-agent in a checkout of the repository, or --chart),
its values (cluster, hub, CA hash, token, image, data volume) given on
standard input; run it from the checkout with the cluster's context:

  tetherctl join edge-1 -o helm | sh

-o json prints {"cluster", "hub", "token", "caHash", "expires", "command"}.

Each join issues a new token; an unused one expires after --ttl. --hub is
the address agents dial, by default the one in your config: pass the
hub's external address when the config says 127.0.0.1. --image replaces the
agent image (a placeholder registry until images are published; see
deploy/README.md).`

// joinFlags are the options of join.
type joinFlags struct {
	ttl                              time.Duration
	output, hub, image, store, chart string
}

// joined is join's JSON output; tools rely on its keys.
type joined struct {
	Cluster string `json:"cluster"`
	Hub     string `json:"hub"`
	Token   string `json:"token"`
	CAHash  string `json:"caHash"`
	Expires string `json:"expires"`
	Command string `json:"command"`
}

func newJoin(s IO) *cobra.Command {
	var f joinFlags
	cmd := &cobra.Command{
		Use:   "join NAME [--ttl 1h] [-o text|manifest|helm|json] [--hub HOST:PORT] [--image IMAGE]",
		Short: "issue a single-use token for a cluster and print how to start its agent",
		Long:  joinLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJoin(contextOf(cmd), s, args[0], f)
		},
	}
	cmd.Flags().DurationVar(&f.ttl, "ttl", joinDefaultTTL, "how long the token is valid (the hub caps it at a week)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output: text (the agent command), manifest (YAML for the cluster), helm (the helm install command) or json")
	cmd.Flags().StringVar(&f.hub, "hub", "", "the hub address agents dial, host:port, or the replicas' addresses comma-separated (default: the config's server)")
	cmd.Flags().StringVar(&f.image, "image", deploy.ImageRepository+":"+version.Version, "the agent image of the manifest")
	cmd.Flags().StringVar(&f.store, "data-volume", deploy.DataVolumePVC,
		"where the manifest's agent keeps its state: pvc (survives the pod) or emptydir (lost with the pod)")
	cmd.Flags().StringVar(&f.chart, "chart", deploy.AgentChartPath, "the tether-agent chart -o helm installs (a path or a repository's chart reference)")
	return cmd
}

func runJoin(ctx context.Context, s IO, name string, f joinFlags) error {
	if err := checkFormat(f.output, "text", formatManifest, formatHelm, formatJSON); err != nil {
		return err
	}
	if f.ttl <= 0 {
		return fmt.Errorf("--ttl %s: must be positive, e.g. 1h", f.ttl)
	}
	if f.store != deploy.DataVolumePVC && f.store != deploy.DataVolumeEmptyDir {
		return fmt.Errorf("--data-volume %q: want %s or %s", f.store, deploy.DataVolumePVC, deploy.DataVolumeEmptyDir)
	}
	// Check what the manifest needs before a token exists: a bad name
	// should not leave one behind.
	if err := deploy.CheckClusterName(name); err != nil {
		return err
	}
	if f.output == formatHelm {
		if err := deploy.CheckChartImage(f.image); err != nil {
			return err
		}
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	hub := f.hub
	if hub == "" {
		hub = c.Config().Address
	}
	addrs := hubaddr.Split(hub)
	if err := hubaddr.Validate("hub address", addrs); err != nil {
		return fmt.Errorf("%w; pass --hub with the address agents dial (or the replicas' addresses, comma-separated)", err)
	}
	hub = strings.Join(addrs, ",")
	resp, err := c.CreateToken(ctx, &hubv1.CreateTokenRequest{
		Ttl: durationpb.New(f.ttl), ClusterName: name, Uses: 1, Description: "tetherctl join " + name})
	if err != nil {
		return err
	}
	j := joined{Cluster: name, Hub: hub, Token: resp.GetToken(), CAHash: resp.GetCaHash(),
		Expires: resp.GetExpireTime().AsTime().UTC().Format(time.RFC3339)}
	j.Command = agentCommand(j)
	switch f.output {
	case formatJSON:
		return writeValue(s.Out, formatJSON, j)
	case formatManifest:
		warnLoopback(s, hub, "the cluster's pods")
		manifest, err := deploy.RenderAgent(deploy.Agent{Cluster: name, Hub: hub, Token: j.Token, CAHash: j.CAHash,
			Image: f.image, DataVolume: f.store})
		if err != nil {
			return err
		}
		_, err = s.Out.Write(manifest)
		return err
	case formatHelm:
		warnLoopback(s, hub, "the cluster's pods")
		command, err := deploy.HelmInstall(deploy.Agent{Cluster: name, Hub: hub, Token: j.Token, CAHash: j.CAHash,
			Image: f.image, DataVolume: f.store}, f.chart)
		if err != nil {
			return err
		}
		_, err = io.WriteString(s.Out, command)
		return err
	}
	fmt.Fprintf(s.Out, "Token for cluster %s: single use, expires %s.\n\n", name, j.Expires)
	fmt.Fprintf(s.Out, "Start the agent on a machine with the cluster's kubeconfig:\n\n  %s\n\n", j.Command)
	fmt.Fprintf(s.Out, "Or run it inside the cluster (with a new token):\n\n  tetherctl join %s -o manifest | kubectl apply -f -\n", name)
	warnLoopback(s, hub, "another machine")
	return nil
}

// agentCommand is the tether-agent command line for j.
func agentCommand(j joined) string {
	return strings.Join([]string{"tether-agent", "--hub", j.Hub, "--token", j.Token, "--ca-hash", j.CAHash,
		"--cluster", j.Cluster, "--kubeconfig", agentKubeconfig, "--data-dir", agentDataDir}, " ")
}

// warnLoopback warns on standard error when agents would dial a loopback
// address that who cannot reach.
func warnLoopback(s IO, hub, who string) {
	for _, host := range hubaddr.Hosts(hubaddr.Split(hub)) {
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			fmt.Fprintf(s.Err, "warning: the hub address %s is loopback: %s cannot reach it; pass --hub with an address it can\n", hub, who)
			return
		}
	}
}
