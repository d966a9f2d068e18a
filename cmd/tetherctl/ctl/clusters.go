package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

func init() { commands = append(commands, newClusters) }

const clustersLong = `Lists the member clusters registered with the hub: their state (Ready,
NotReady, or Unknown when the lease ran out), the age of their lease
(time since the last heartbeat), the capacity they last reported
(allocatable cpu, memory and pods) and their agent's version. -o wide adds
the labels and taints; -o json and -o yaml print the hub's records.
"clusters NAME" shows one.`

// clustersFlags are the options of clusters.
type clustersFlags struct {
	selector, output string
	// objects: -o json and -o yaml print cluster.tether.io Cluster objects
	// (get clusters), not the hub's cluster views (clusters).
	objects bool
}

func newClusters(s IO) *cobra.Command {
	var f clustersFlags
	cmd := &cobra.Command{
		Use:   "clusters [NAME] [-l SELECTOR] [-o table|wide|yaml|json]",
		Short: "list member clusters with their state and capacity",
		Long:  clustersLong,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClusters(contextOf(cmd), s, f, args)
		},
	}
	cmd.Flags().StringVarP(&f.selector, "selector", "l", "", "label selector over cluster labels")
	cmd.Flags().StringVarP(&f.output, "output", "o", formatTable, "output format: table, wide, yaml or json")
	return cmd
}

func runClusters(ctx context.Context, s IO, f clustersFlags, names []string) error {
	allowed := []string{formatTable, formatWide, formatJSON, formatYAML}
	if f.objects {
		allowed = append(allowed, printerFormats...)
	}
	if err := checkFormat(f.output, allowed...); err != nil {
		return err
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var cs []*hubv1.Cluster
	if len(names) == 1 {
		resp, err := c.GetCluster(ctx, names[0])
		if err != nil {
			return err
		}
		cs = []*hubv1.Cluster{resp.GetCluster()}
	} else {
		cs, err = c.ListClusters(ctx, client.ClusterSelector{LabelSelector: f.selector,
			WithObjects: f.objects && (f.output == formatJSON || f.output == formatYAML || isPrinterFormat(f.output))})
		if err != nil {
			return err
		}
	}
	switch {
	case isPrinterFormat(f.output), f.output == formatJSON, f.output == formatYAML:
		if f.objects {
			return writeClusterObjects(s, f.output, cs, len(names) == 1)
		}
		return writeClusters(s, f.output, cs, len(names) == 1)
	}
	if len(cs) == 0 {
		fmt.Fprintln(s.Err, "No clusters registered.")
		return nil
	}
	return printClusters(s, cs, f.output == formatWide)
}

// writeClusters prints clusters as the hub's JSON (protojson field names).
func writeClusters(s IO, format string, cs []*hubv1.Cluster, single bool) error {
	var raw [][]byte
	for _, c := range cs {
		js, err := protojson.Marshal(c)
		if err != nil {
			return err
		}
		raw = append(raw, js)
	}
	if single {
		return writeValue(s.Out, format, jsonRaw(raw[0]))
	}
	items := make([]jsonRaw, 0, len(raw))
	for _, r := range raw {
		items = append(items, r)
	}
	return writeValue(s.Out, format, map[string]any{"clusters": items})
}

// writeClusterObjects prints clusters as cluster.tether.io/v1alpha1
// Cluster objects: one as itself, several as a List, as kubectl does.
func writeClusterObjects(s IO, format string, cs []*hubv1.Cluster, single bool) error {
	raw := make([]json.RawMessage, 0, len(cs))
	for _, c := range cs {
		if len(c.GetObjectJson()) == 0 {
			return fmt.Errorf("cluster %s: the hub sent no object (a hub older than this tetherctl?); use tetherctl clusters %s -o %s", c.GetName(), c.GetName(), format)
		}
		raw = append(raw, c.GetObjectJson())
	}
	if isPrinterFormat(format) {
		return writeObjectsAs(s.Out, format, raw, single)
	}
	return writeObjects(s.Out, format, raw, single)
}

// jsonRaw is a JSON document to embed as is.
type jsonRaw []byte

func (r jsonRaw) MarshalJSON() ([]byte, error) { return r, nil }

// printClusters writes NAME STATE LEASE-AGE CPU MEM PODS AGENT, and with
// wide LABELS and TAINTS.
func printClusters(s IO, cs []*hubv1.Cluster, wide bool) error {
	header := []string{"NAME", "STATE", "LEASE-AGE", "CPU", "MEM", "PODS", "AGENT"}
	if wide {
		header = append(header, "LABELS", "TAINTS")
	}
	t := newTable(s.Out, header...)
	for _, c := range cs {
		alloc := c.GetCapacity().GetAllocatable()
		row := []string{c.GetName(), clusterState(c), leaseAge(c),
			orDash(alloc["cpu"]), orDash(alloc["memory"]), orDash(alloc["pods"]), orDash(c.GetAgentVersion())}
		if wide {
			row = append(row, labelString(c.GetLabels()), taintString(c.GetTaints()))
		}
		t.row(row...)
	}
	return t.flush()
}

// clusterState is the state as kubectl shows nodes: Ready, NotReady or
// Unknown, with ",SchedulingDisabled" when cordoned.
func clusterState(c *hubv1.Cluster) string {
	st := map[hubv1.ClusterState]string{
		hubv1.ClusterState_CLUSTER_STATE_PENDING: "Pending", hubv1.ClusterState_CLUSTER_STATE_READY: "Ready",
		hubv1.ClusterState_CLUSTER_STATE_NOT_READY: "NotReady", hubv1.ClusterState_CLUSTER_STATE_UNKNOWN: "Unknown",
	}[c.GetState()]
	if st == "" {
		st = "Unknown"
	}
	if c.GetCordoned() {
		st += ",SchedulingDisabled"
	}
	return st
}

func leaseAge(c *hubv1.Cluster) string {
	if c.GetLeaseAge() == nil {
		return "-"
	}
	return shortDuration(c.GetLeaseAge().AsDuration())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// taintString renders taints as key=value:Effect, comma-separated.
func taintString(ts []*hubv1.Taint) string {
	var parts []string
	for _, t := range ts {
		p := t.GetKey()
		if t.GetValue() != "" {
			p += "=" + t.GetValue()
		}
		parts = append(parts, p+":"+effectName(t.GetEffect()))
	}
	return orNone(strings.Join(parts, ","))
}

// Taint effects by their Kubernetes names.
var effectNames = map[hubv1.TaintEffect]string{
	hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE:        "NoSchedule",
	hubv1.TaintEffect_TAINT_EFFECT_PREFER_NO_SCHEDULE: "PreferNoSchedule",
	hubv1.TaintEffect_TAINT_EFFECT_NO_EXECUTE:         "NoExecute",
}

func effectName(e hubv1.TaintEffect) string {
	if n, ok := effectNames[e]; ok {
		return n
	}
	return "?"
}
