package ctl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
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
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	verb := "cordoned"
	if on {
		_, err = c.Cordon(ctx, name)
	} else {
		verb = "uncordoned"
		_, err = c.Uncordon(ctx, name)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "cluster/%s %s\n", name, verb)
	return nil
}
