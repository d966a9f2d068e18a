package ctl

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// The positional form of `placement` (simulate.go builds the command and
// its `simulate` subcommand; this hook adds `placement KIND/NAME`).
func init() { rootHooks = append(rootHooks, addPlacementQuery) }

const placementQueryLong = `"placement KIND/NAME" asks the hub where a template runs: the policy
that matched it, the clusters and replicas the scheduler chose, and every
cluster it turned down with why. -o json prints
{"clusters": [{"name", "replicas"}], "rejected": [{"name", "reasons"}]};
-o jsonpath=TEMPLATE runs a JSONPath template over that
('{.clusters[*].name}').

"placement simulate" runs the scheduler offline on an input file.`

// placementResult is placement's JSON and YAML output.
type placementResult struct {
	Clusters []placedCluster   `json:"clusters"`
	Rejected []rejectedCluster `json:"rejected"`
}

type placedCluster struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

type rejectedCluster struct {
	Name    string   `json:"name"`
	Reasons []string `json:"reasons"`
}

func addPlacementQuery(root *cobra.Command, s IO) {
	var cmd *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "placement" {
			cmd = c
		}
	}
	if cmd == nil {
		return
	}
	var namespace, output string
	var w placementWatchFlags
	cmd.Use = "placement KIND/NAME [-n NS] [-o table|json|yaml|jsonpath=...] | placement KIND[/NAME] -w [-l SELECTOR] [-n NS | -A]"
	cmd.Long = placementQueryLong + placementWatchLong
	cmd.Args = cobra.MaximumNArgs(1)
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		if w.watch {
			return runPlacementWatch(contextOf(c), s, args[0], namespace, output, w)
		}
		if err := checkFormat(output, formatTable, formatJSON, formatYAML, formatJSONPath, formatJSONPathFile); err != nil {
			return err
		}
		k, name, err := parseKindName(contextOf(c), args[0])
		if err != nil {
			return err
		}
		if !k.template {
			return fmt.Errorf("%s is not a resource template; only templates have a placement", k.kind)
		}
		if namespace == "" {
			namespace = "default"
		}
		return placementQuery(contextOf(c), s, k.ref(namespace, name), output)
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", `namespace (default "default")`)
	cmd.Flags().StringVarP(&output, "output", "o", formatTable, "output format: table, json, yaml, jsonpath=TEMPLATE or jsonpath-file=FILE")
	cmd.Flags().BoolVarP(&w.watch, "watch", "w", false, "stream the placement's changes (of every template of KIND with KIND alone)")
	cmd.Flags().StringVarP(&w.selector, "selector", "l", "", "with -w and KIND: label selector on the templates, e.g. app=web")
	cmd.Flags().BoolVarP(&w.allNamespaces, "all-namespaces", "A", false, "with -w and KIND: templates of every namespace")
}

func placementQuery(ctx context.Context, s IO, ref *hubv1.ObjectRef, output string) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	pl, err := c.GetPlacement(ctx, ref)
	if err != nil {
		return err
	}
	if isPrinterFormat(output) {
		return writeValueAs(s.Out, output, resultOf(pl))
	}
	if output != formatTable {
		return writeValue(s.Out, output, resultOf(pl))
	}
	return printPlacement(s, pl)
}

func resultOf(pl *hubv1.Placement) placementResult {
	out := placementResult{Clusters: []placedCluster{}, Rejected: []rejectedCluster{}}
	for _, c := range pl.GetClusters() {
		out.Clusters = append(out.Clusters, placedCluster{Name: c.GetCluster(), Replicas: c.GetReplicas()})
	}
	for _, r := range pl.GetRejections() {
		out.Rejected = append(out.Rejected, rejectedCluster{Name: r.GetCluster(), Reasons: r.GetReasons()})
	}
	return out
}

// printPlacement writes the policy and scheduling state, then one row per
// cluster: chosen ones with their replicas, rejected ones with why.
func printPlacement(s IO, pl *hubv1.Placement) error {
	fmt.Fprintf(s.Out, "Policy:     %s\n", refString(pl.GetPolicy()))
	state := "True"
	if !pl.GetScheduled() {
		state = "False"
	}
	if pl.GetMessage() != "" {
		state += " (" + pl.GetMessage() + ")"
	}
	fmt.Fprintf(s.Out, "Scheduled:  %s\n\n", state)
	t := newTable(s.Out, "CLUSTER", "REPLICAS", "REASON")
	for _, c := range pl.GetClusters() {
		t.row(c.GetCluster(), fmt.Sprint(c.GetReplicas()), "chosen")
	}
	for _, r := range pl.GetRejections() {
		t.row(r.GetCluster(), "-", "rejected: "+strings.Join(r.GetReasons(), "; "))
	}
	return t.flush()
}

// refString renders a reference as Kind namespace/name, "<none>" for nil.
func refString(r *hubv1.ObjectRef) string {
	if r == nil {
		return "<none>"
	}
	if r.GetNamespace() == "" {
		return r.GetKind() + " " + r.GetName()
	}
	return r.GetKind() + " " + r.GetNamespace() + "/" + r.GetName()
}
