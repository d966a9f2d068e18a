package ctl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

func init() { commands = append(commands, newApply) }

const applyLong = `Stores objects in the hub: resource templates of any kind and Tether's
policies. -f names a file, a directory (its .yaml, .yml and .json files,
not recursing) or "-" for standard input; files hold one or more YAML
documents or JSON values. -f can be repeated (-f deployment.yaml -f
policy.yaml): the objects of every file are applied together, in one
request.

If any object is rejected, nothing is stored and the others say what
would have happened. Objects are written in dependency order, whatever
their order in the files: Namespaces, CustomResourceDefinitions,
interpreter customizations and policies, then templates in Helm's install
order, custom resources last. Prints kind/name created, configured or
unchanged per object. Should a write fail (another writer changed the
object, the store failed), the objects written before it stay written,
the command prints which failed and why and which were skipped, and exits
1. --dry-run checks and compares without storing.

--wait then follows every template applied: one line per template and
change, with each target cluster's ready/desired replicas (or health), until
all clusters run it ready; after --timeout it exits 1 saying what is
missing. Ready means the cluster's agent applied it and reports
readyReplicas (and updatedReplicas) equal to replicas, or, for objects
without replicas, Healthy.`

func newApply(s IO) *cobra.Command {
	var (
		files        []string
		namespace    string
		dryRun, wait bool
		timeout      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR|- [-f ...] [-n NS] [--dry-run]",
		Short: "create or update objects in the hub from files",
		Long:  applyLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if wait && dryRun {
				return fmt.Errorf("--wait and --dry-run: a dry run stores nothing to wait for; drop one")
			}
			if !wait {
				timeout = 0
			} else if timeout <= 0 {
				return fmt.Errorf("--timeout %s: must be positive, e.g. 5m", timeout)
			}
			manifests, err := readManifests(files, s.In)
			if err != nil {
				return err
			}
			return apply(contextOf(cmd), s, &hubv1.ApplyRequest{Manifests: manifests, DryRun: dryRun, DefaultNamespace: namespace}, timeout)
		},
	}
	addFilenameFlag(cmd, &files, filenameHelp)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace of objects that name none (default \"default\")")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check and compare, store nothing")
	cmd.Flags().BoolVar(&wait, "wait", false, "then show each template's per-cluster progress until it is rolled out")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultWaitTimeout, "with --wait: give up (exit 1) after this long")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// apply stores req's objects; with wait > 0 it then waits as long for
// the templates among them to roll out (wait.go).
func apply(ctx context.Context, s IO, req *hubv1.ApplyRequest, wait time.Duration) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := c.ApplyWith(ctx, client.ApplyOptions{DryRun: req.GetDryRun(), DefaultNamespace: req.GetDefaultNamespace()}, req.GetManifests())
	if resp == nil {
		return err // the call failed; a rejection or partial write comes with the response, printed below
	}
	suffix := ""
	switch {
	case req.GetDryRun():
		suffix = " (dry run)"
	case !resp.GetCommitted():
		suffix = " (not stored)"
	}
	if resp.GetPartial() {
		suffix = ""
	}
	if err := printResults(s, resp, suffix); err != nil {
		return err
	}
	if wait > 0 && resp.GetCommitted() {
		return waitRollout(ctx, s, c, resp.GetResults(), wait)
	}
	return nil
}

// printResults prints one line per object: what was stored to s.Out, what
// was not and why to s.Err. It returns an error saying how many objects
// were rejected, or failed or skipped, when any was.
func printResults(s IO, resp *hubv1.ApplyResponse, suffix string) error {
	counts := map[hubv1.ApplyOutcome]int{}
	for _, r := range resp.GetResults() {
		name := strings.ToLower(r.GetRef().GetKind()) + "/" + r.GetRef().GetName()
		counts[r.GetOutcome()]++
		switch r.GetOutcome() {
		case hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED:
			fmt.Fprintf(s.Err, "%s rejected: %s\n", name, r.GetMessage())
			for _, fe := range r.GetFieldErrors() {
				fmt.Fprintf(s.Err, "  %s: %s %s\n", fe.GetField(), fe.GetType(), fe.GetDetail())
			}
		case hubv1.ApplyOutcome_APPLY_OUTCOME_FAILED, hubv1.ApplyOutcome_APPLY_OUTCOME_SKIPPED:
			fmt.Fprintf(s.Err, "%s %s: %s\n", name, outcomeName(r.GetOutcome()), r.GetMessage())
		default:
			fmt.Fprintf(s.Out, "%s %s%s\n", name, outcomeName(r.GetOutcome()), suffix)
		}
	}
	total := len(resp.GetResults())
	if n := counts[hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED]; n > 0 {
		return fmt.Errorf("%d of %d objects rejected; nothing was stored", n, total)
	}
	if resp.GetPartial() {
		failed, skipped := counts[hubv1.ApplyOutcome_APPLY_OUTCOME_FAILED], counts[hubv1.ApplyOutcome_APPLY_OUTCOME_SKIPPED]
		return fmt.Errorf("%d of %d objects not written (%d failed, %d skipped); the others were stored as printed", failed+skipped, total, failed, skipped)
	}
	return nil
}

// outcomeName is kubectl's word for an outcome.
func outcomeName(o hubv1.ApplyOutcome) string {
	return strings.ToLower(strings.TrimPrefix(o.String(), "APPLY_OUTCOME_"))
}
