package ctl

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

func init() { commands = append(commands, newRollout) }

// rolloutVerbs are tetherctl rollout's subcommands, each one typed call.
var rolloutVerbs = []struct {
	name, short string
	call        func(*client.Client, context.Context, *hubv1.ObjectRef) (*hubv1.RolloutStatus, error)
}{
	{"status", "show a template's rollout: its phase (and why when paused) and every cluster's", (*client.Client).RolloutStatus},
	{"pause", "stop a rollout admitting clusters (those in flight are still judged)", (*client.Client).PauseRollout},
	{"resume", "resume a paused rollout, tolerating the failures so far", (*client.Client).ResumeRollout},
	{"undo", "roll a template back to its previous revision, through the same gates", (*client.Client).UndoRollout},
}

func newRollout(s IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout status|pause|resume|undo KIND/NAME [-n NS]",
		Short: "show and steer the rollout of a template a RolloutPolicy paces",
	}
	for _, v := range rolloutVerbs {
		var namespace string
		sub := &cobra.Command{
			Use:   v.name + " KIND/NAME [-n NS]",
			Short: v.short,
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return runRollout(contextOf(c), s, args[0], namespace, v.call)
			},
		}
		sub.Flags().StringVarP(&namespace, "namespace", "n", "", `namespace (default "default")`)
		cmd.AddCommand(sub)
	}
	return cmd
}

func runRollout(ctx context.Context, s IO, arg, namespace string, call func(*client.Client, context.Context, *hubv1.ObjectRef) (*hubv1.RolloutStatus, error)) error {
	k, name, err := parseKindName(ctx, arg)
	if err != nil {
		return err
	}
	if !k.template {
		return fmt.Errorf("%s is not a resource template; only templates have a rollout", k.kind)
	}
	if namespace == "" {
		namespace = "default"
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := call(c, ctx, k.ref(namespace, name))
	if err != nil {
		return err
	}
	printRollout(s, st)
	return nil
}

// printRollout prints the rollout's phase line, then one line per cluster.
func printRollout(s IO, st *hubv1.RolloutStatus) {
	fmt.Fprintf(s.Out, "policy: %s\nrevision: %s (stable %s)\nphase: %s", st.GetPolicy(), st.GetRevision(), orNone(st.GetStable()), st.GetPhase())
	if st.GetMessage() != "" {
		fmt.Fprintf(s.Out, ": %s", st.GetMessage())
	}
	fmt.Fprintln(s.Out)
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tPHASE\tREVISION\tSINCE\tMESSAGE")
	for _, c := range st.GetClusters() {
		since := "-"
		if c.GetSince() != nil {
			since = c.GetSince().AsTime().UTC().Format(time.RFC3339)
		}
		msg := c.GetMessage()
		if c.GetLate() && msg == "" {
			msg = "late"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.GetCluster(), c.GetPhase(), orNone(c.GetRevision()), since, msg)
	}
	tw.Flush()
}
