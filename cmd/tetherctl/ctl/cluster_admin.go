package ctl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// cluster remove and cluster approve extend a "cluster" command, made here
// unless another file made one.
func init() { rootHooks = append(rootHooks, addClusterAdmin) }

const clusterRemoveLong = `Unregisters a member cluster: the hub revokes its agent's certificate,
ends its stream at once (the agent stops and does not reconnect) and
places its replicas elsewhere. What was applied in the member cluster stays
there: the hub sends no deletions. To bring it back, register it again with
a new token.`

const clusterApproveLong = `Lets a new key take over a registered cluster name (a reinstalled agent).
A registration with another key than the registered one is refused and its
key's fingerprint recorded; approving binds the name to that key: the old
agent's certificate is refused from now on, and the new agent's next
registration attempt succeeds. --key-fingerprint, when given, must be the
pending key's (as the refused agent logged it), so you approve the key you saw.`

func addClusterAdmin(root *cobra.Command, s IO) {
	var cluster *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "cluster" {
			cluster = c
		}
	}
	if cluster == nil {
		cluster = &cobra.Command{Use: "cluster", Short: "administer member clusters: remove, approve a new key"}
		root.AddCommand(cluster)
	}
	cluster.AddCommand(newClusterRemove(s), newClusterApprove(s))
}

func newClusterRemove(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "unregister a cluster: revoke its certificate and disconnect its agent",
		Long:  clusterRemoveLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return clusterAdmin(contextOf(cmd), s, func(c hubv1.ClusterServiceClient) (string, error) {
				_, err := c.Remove(contextOf(cmd), &hubv1.RemoveRequest{Name: args[0]})
				return fmt.Sprintf("cluster/%s removed; its certificate is revoked", args[0]), err
			})
		},
	}
}

func newClusterApprove(s IO) *cobra.Command {
	var fp string
	cmd := &cobra.Command{
		Use:   "approve NAME [--key-fingerprint sha256:HEX]",
		Short: "let a new key take over a registered cluster name",
		Long:  clusterApproveLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return clusterAdmin(contextOf(cmd), s, func(c hubv1.ClusterServiceClient) (string, error) {
				_, err := c.Approve(contextOf(cmd), &hubv1.ApproveRequest{Name: args[0], KeyFingerprint: fp})
				return fmt.Sprintf("cluster/%s approved: its agent may register with the new key", args[0]), err
			})
		},
	}
	cmd.Flags().StringVar(&fp, "key-fingerprint", "", "the pending key's fingerprint; empty approves whichever is pending")
	return cmd
}

// clusterAdmin dials, runs call and prints its message.
func clusterAdmin(ctx context.Context, s IO, call func(hubv1.ClusterServiceClient) (string, error)) error {
	conn, cfg, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	msg, err := call(hubv1.NewClusterServiceClient(conn))
	if err != nil {
		return explain(cfg, err)
	}
	_, err = fmt.Fprintln(s.Out, msg)
	return err
}
