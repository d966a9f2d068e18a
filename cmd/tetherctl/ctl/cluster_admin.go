package ctl

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/tetherproj/tether/client"
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
key's fingerprint recorded as pending: tetherctl cluster pending lists
them, and the refused agent logs its own. Approving binds the name to that
key: the old agent's certificate is refused from now on, and the new
agent's next registration attempt succeeds.

--key-fingerprint is required and must be the pending key's
(sha256:<64 hex digits>), so that you approve the key you checked against
the agent's log, never whichever registered last. A pending key is never
replaced by another registration: reject it (tetherctl cluster reject) to
let another key be recorded.`

const clusterRejectLong = `Discards a cluster's pending key (see cluster approve), so that the
next registration with a new key is recorded as pending in its place. The
registered key and the cluster are unchanged. --key-fingerprint is
required and must be the pending key's.`

const clusterPendingLong = `Lists the clusters with a key awaiting approval: a registration with
another key than the registered one (a reinstalled agent, or someone
else's). Compare the fingerprint with the one the new agent logged, then
approve it (tetherctl cluster approve NAME --key-fingerprint ...) or
reject it (tetherctl cluster reject NAME --key-fingerprint ...).`

// fingerprintPattern is a key fingerprint as the hub prints them.
var fingerprintPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// fingerprintFlag checks --key-fingerprint before the hub is asked.
func fingerprintFlag(fp string) error {
	switch {
	case fp == "":
		return errors.New("--key-fingerprint: required: the pending key's fingerprint, sha256:<64 hex digits>, as `tetherctl cluster pending` shows it")
	case !fingerprintPattern.MatchString(fp):
		return fmt.Errorf("--key-fingerprint %q: want sha256:<64 lowercase hex digits>, as `tetherctl cluster pending` shows it", fp)
	}
	return nil
}

func addClusterAdmin(root *cobra.Command, s IO) {
	var cluster *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "cluster" {
			cluster = c
		}
	}
	if cluster == nil {
		cluster = &cobra.Command{Use: "cluster", Short: "administer member clusters: remove, approve or reject a new key"}
		root.AddCommand(cluster)
	}
	cluster.AddCommand(newClusterRemove(s), newClusterApprove(s), newClusterReject(s), newClusterPending(s))
}

func newClusterRemove(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "unregister a cluster: revoke its certificate and disconnect its agent",
		Long:  clusterRemoveLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return clusterAdmin(contextOf(cmd), s, func(c *client.Client) (string, error) {
				err := c.RemoveCluster(contextOf(cmd), args[0])
				return fmt.Sprintf("cluster/%s removed; its certificate is revoked", args[0]), err
			})
		},
	}
}

func newClusterApprove(s IO) *cobra.Command {
	var fp string
	cmd := &cobra.Command{
		Use:   "approve NAME --key-fingerprint sha256:HEX",
		Short: "let a new key take over a registered cluster name",
		Long:  clusterApproveLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fingerprintFlag(fp); err != nil {
				return err
			}
			return clusterAdmin(contextOf(cmd), s, func(c *client.Client) (string, error) {
				_, err := c.Approve(contextOf(cmd), args[0], fp)
				return fmt.Sprintf("cluster/%s approved: its agent may register with the key %s", args[0], fp), err
			})
		},
	}
	cmd.Flags().StringVar(&fp, "key-fingerprint", "", "the pending key's fingerprint, sha256:<64 hex digits> (required; see cluster pending)")
	return cmd
}

func newClusterReject(s IO) *cobra.Command {
	var fp string
	cmd := &cobra.Command{
		Use:   "reject NAME --key-fingerprint sha256:HEX",
		Short: "discard a cluster's pending key",
		Long:  clusterRejectLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := fingerprintFlag(fp); err != nil {
				return err
			}
			return clusterAdmin(contextOf(cmd), s, func(c *client.Client) (string, error) {
				err := c.RejectKey(contextOf(cmd), args[0], fp)
				return fmt.Sprintf("cluster/%s: pending key %s rejected", args[0], fp), err
			})
		},
	}
	cmd.Flags().StringVar(&fp, "key-fingerprint", "", "the pending key's fingerprint, sha256:<64 hex digits> (required; see cluster pending)")
	return cmd
}

func newClusterPending(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "pending",
		Short: "list the clusters with a new key awaiting approval, with its fingerprint",
		Long:  clusterPendingLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runClusterPending(contextOf(cmd), s)
		},
	}
}

func runClusterPending(ctx context.Context, s IO) error {
	hub, err := dial(ctx)
	if err != nil {
		return err
	}
	defer hub.Close()
	clusters, err := hub.ListClusters(ctx, client.ClusterSelector{})
	if err != nil {
		return err
	}
	t := newTable(s.Out, "NAME", "PENDING KEY")
	n := 0
	for _, c := range clusters {
		if fp := c.GetPendingKeyFingerprint(); fp != "" {
			t.row(c.GetName(), fp)
			n++
		}
	}
	if n == 0 {
		_, err := fmt.Fprintln(s.Err, "No keys awaiting approval.")
		return err
	}
	return t.flush()
}

// clusterAdmin dials, runs call and prints its message.
func clusterAdmin(ctx context.Context, s IO, call func(*client.Client) (string, error)) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	msg, err := call(c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(s.Out, msg)
	return err
}
