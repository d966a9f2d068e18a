package ctl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

func init() { commands = append(commands, newApply) }

const applyLong = `Stores objects in the hub: resource templates of any kind and Tether's
policies. -f names a file, a directory (its .yaml, .yml and .json files,
not recursing) or "-" for standard input; files hold one or more YAML
documents or JSON values. -f can be repeated (-f deployment.yaml -f
policy.yaml): the objects of every file are applied together, in one
request.

All or nothing: if any object is rejected, nothing is stored and the
others say what would have happened. Prints kind/name created,
configured or unchanged per object; --dry-run checks and compares without
storing.

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
	conn, cfg, err := dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := hubv1.NewObjectServiceClient(conn).Apply(ctx, req)
	if err != nil {
		return explain(cfg, err)
	}
	suffix := ""
	switch {
	case req.GetDryRun():
		suffix = " (dry run)"
	case !resp.GetCommitted():
		suffix = " (not stored)"
	}
	rejected := 0
	for _, r := range resp.GetResults() {
		name := strings.ToLower(r.GetRef().GetKind()) + "/" + r.GetRef().GetName()
		if r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
			fmt.Fprintf(s.Out, "%s %s%s\n", name, outcomeName(r.GetOutcome()), suffix)
			continue
		}
		rejected++
		fmt.Fprintf(s.Err, "%s rejected: %s\n", name, r.GetMessage())
		for _, fe := range r.GetFieldErrors() {
			fmt.Fprintf(s.Err, "  %s: %s %s\n", fe.GetField(), fe.GetType(), fe.GetDetail())
		}
	}
	if rejected > 0 {
		return fmt.Errorf("%d of %d objects rejected; nothing was stored", rejected, len(resp.GetResults()))
	}
	if wait > 0 && resp.GetCommitted() {
		return waitRollout(ctx, s, conn, cfg, resp.GetResults(), wait)
	}
	return nil
}

// outcomeName is kubectl's word for an outcome.
func outcomeName(o hubv1.ApplyOutcome) string {
	return strings.ToLower(strings.TrimPrefix(o.String(), "APPLY_OUTCOME_"))
}
