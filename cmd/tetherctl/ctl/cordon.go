package ctl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

func init() { commands = append(commands, newCordon, newUncordon) }

func newCordon(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "cordon NAME",
		Short: "stop placing new replicas on a cluster (what runs there stays)",
		Long: `Marks a member cluster unschedulable with a NoSchedule taint: new
placements avoid it, replicas already there stay. To move them away,
drain with "tetherctl taint NAME KEY:NoExecute". Idempotent.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cordon(contextOf(cmd), s, args[0], true)
		},
	}
}

func newUncordon(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "uncordon NAME",
		Short: "let the scheduler place replicas on a cluster again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cordon(contextOf(cmd), s, args[0], false)
		},
	}
}

func cordon(ctx context.Context, s IO, name string, on bool) error {
	conn, cfg, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	client := hubv1.NewClusterServiceClient(conn)
	verb := "cordoned"
	if on {
		_, err = client.Cordon(ctx, &hubv1.CordonRequest{Name: name})
	} else {
		verb = "uncordoned"
		_, err = client.Uncordon(ctx, &hubv1.UncordonRequest{Name: name})
	}
	if err != nil {
		return explain(cfg, err)
	}
	fmt.Fprintf(s.Out, "cluster/%s %s\n", name, verb)
	return nil
}
