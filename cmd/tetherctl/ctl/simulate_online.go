package ctl

// `tetherctl simulate`: the hub's what-if (PlacementService.Simulate), which
// places and renders a template as if it and the given policies were
// applied, storing nothing.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

func init() { commands = append(commands, newSimulate) }

const simulateLong = `Asks the hub where a template would run and what each cluster would
receive, as if the template and the given policies were applied on top of
what the hub stores. Nothing is stored. The first -f is the template (one
object); further -f files (or directories, or "-") hold propagation and
override policies and interpreter customizations, which replace stored
ones of the same kind and name.

Prints the policy, the chosen clusters with their replicas and why the
others were turned down, then per cluster what differs from the template:
replicas, overrides, and dependencies propagated with it. -o json and -o
yaml print {"placement": {...}, "rendered": [{"cluster", "applyStrategy",
"conflictResolution", "objects"}]} with every rendered object in full. Each
cluster also says how its agent would write the template: the strategy of
its apply.tether.io/strategy annotation and the policy's conflictResolution.

Offline variants that need no hub: placement simulate, overrides simulate.`

// simulated is simulate's JSON and YAML output.
type simulated struct {
	Placement simulatedPlacement `json:"placement"`
	Rendered  []renderedCluster  `json:"rendered"`
}

type simulatedPlacement struct {
	Policy    string `json:"policy,omitempty"`
	Scheduled bool   `json:"scheduled"`
	Message   string `json:"message,omitempty"`
	placementResult
}

type renderedCluster struct {
	Cluster            string            `json:"cluster"`
	ApplyStrategy      string            `json:"applyStrategy,omitempty"`
	ConflictResolution string            `json:"conflictResolution,omitempty"`
	Objects            []json.RawMessage `json:"objects"`
}

func newSimulate(s IO) *cobra.Command {
	var files []string
	var output string
	cmd := &cobra.Command{
		Use:   "simulate -f TEMPLATE [-f POLICIES ...] [-o table|json|yaml]",
		Short: "show where a template would run and what each cluster would get, without applying",
		Long:  simulateLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, formatTable, formatJSON, formatYAML); err != nil {
				return err
			}
			req, err := simulateRequest(files, s)
			if err != nil {
				return err
			}
			return runSimulate(contextOf(cmd), s, req, output)
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, `the template, then policy files or directories ("-" for standard input)`)
	cmd.Flags().StringVarP(&output, "output", "o", formatTable, "output format: table, json or yaml")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// simulateRequest reads the template (the first file) and the policies.
func simulateRequest(files []string, s IO) (*hubv1.SimulateRequest, error) {
	if n := countOf(files, "-"); n > 1 {
		return nil, fmt.Errorf(`-f -: standard input named %d times; name it once`, n)
	}
	template, err := readManifests(files[:1], s.In)
	if err != nil {
		return nil, err
	}
	req := &hubv1.SimulateRequest{Template: template}
	if len(files) > 1 {
		if req.Policies, err = readManifests(files[1:], s.In); err != nil {
			return nil, err
		}
	}
	return req, nil
}

func runSimulate(ctx context.Context, s IO, req *hubv1.SimulateRequest, output string) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := c.Simulate(ctx, req.GetTemplate(), req.GetPolicies())
	if resp == nil {
		return err // the call failed; rejected inputs come with the response, printed below
	}
	if err := simulationRejected(s, resp.GetInputs()); err != nil {
		return err
	}
	if output != formatTable {
		return writeValue(s.Out, output, simulatedOf(resp))
	}
	if err := printPlacement(s, resp.GetPlacement()); err != nil {
		return err
	}
	return printRendered(s, req.GetTemplate(), resp.GetRendered())
}

// simulationRejected reports the inputs the hub refused, as apply does.
func simulationRejected(s IO, inputs []*hubv1.ApplyResult) error {
	rejected := 0
	for _, r := range inputs {
		if r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
			continue
		}
		rejected++
		fmt.Fprintf(s.Err, "%s rejected: %s\n", kindName(r.GetRef()), r.GetMessage())
		for _, fe := range r.GetFieldErrors() {
			fmt.Fprintf(s.Err, "  %s: %s %s\n", fe.GetField(), fe.GetType(), fe.GetDetail())
		}
	}
	if rejected > 0 {
		return fmt.Errorf("%d of %d inputs rejected; fix them and simulate again", rejected, len(inputs))
	}
	return nil
}

func simulatedOf(resp *hubv1.SimulateResponse) simulated {
	pl := resp.GetPlacement()
	out := simulated{Placement: simulatedPlacement{Scheduled: pl.GetScheduled(), Message: pl.GetMessage(), placementResult: resultOf(pl)},
		Rendered: []renderedCluster{}}
	if pl.GetPolicy() != nil {
		out.Placement.Policy = refString(pl.GetPolicy())
	}
	for _, r := range resp.GetRendered() {
		rc := renderedCluster{Cluster: r.GetCluster(), ApplyStrategy: r.GetApplyStrategy(),
			ConflictResolution: r.GetConflictResolution(), Objects: []json.RawMessage{}}
		for _, o := range r.GetObjectsJson() {
			rc.Objects = append(rc.Objects, o)
		}
		out.Rendered = append(out.Rendered, rc)
	}
	return out
}

// printRendered writes, per cluster, how what it would receive differs
// from the template: changed fields of the template (the hub's ownership
// labels and annotations among them) and the other objects (dependencies)
// by name.
func printRendered(s IO, template []byte, rendered []*hubv1.RenderedCluster) error {
	if len(rendered) == 0 {
		return nil
	}
	var orig map[string]any
	if err := yaml.Unmarshal(template, &orig); err != nil {
		return fmt.Errorf("template: %w", err)
	}
	fmt.Fprintln(s.Out, "\nRendered (differences from the template):")
	for _, r := range rendered {
		fmt.Fprintf(s.Out, "  %s:\n", r.GetCluster())
		for i, js := range r.GetObjectsJson() {
			var obj map[string]any
			if err := json.Unmarshal(js, &obj); err != nil {
				return fmt.Errorf("rendered object for %s: %w", r.GetCluster(), err)
			}
			if i > 0 || !sameObject(orig, obj) {
				fmt.Fprintf(s.Out, "    + %s (propagated with it)\n", objectName(obj))
				continue
			}
			changes := diffValues("", orig, obj, nil)
			if len(changes) == 0 {
				fmt.Fprintln(s.Out, "    no change")
			}
			for _, c := range changes {
				fmt.Fprintf(s.Out, "    %s\n", c)
			}
		}
		if r.GetApplyStrategy() != "" {
			fmt.Fprintf(s.Out, "    applied with %s, conflict resolution %s\n", r.GetApplyStrategy(), r.GetConflictResolution())
		}
	}
	return nil
}

// sameObject reports whether a and b name the same object (kind and name).
func sameObject(a, b map[string]any) bool {
	return a["kind"] == b["kind"] && nested(a, "metadata", "name") == nested(b, "metadata", "name")
}

func objectName(obj map[string]any) string {
	name, _ := nested(obj, "metadata", "name").(string)
	if ns, _ := nested(obj, "metadata", "namespace").(string); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%v %s", obj["kind"], name)
}

func nested(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// ignoredPaths are fields the hub sets on every stored or rendered object;
// they say nothing about overrides.
var ignoredPaths = map[string]bool{
	"metadata.namespace": true, "metadata.uid": true, "metadata.resourceVersion": true,
	"metadata.creationTimestamp": true, "metadata.generation": true, "status": true,
}

// diffValues lists the differences between a and b as "path: a -> b",
// "path: + b" and "path: - a", paths sorted within each map.
func diffValues(path string, a, b any, out []string) []string {
	if ignoredPaths[path] {
		return out
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := slices.Sorted(maps.Keys(am))
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			av, inA := am[k]
			bv, inB := bm[k]
			p := joinPath(path, k)
			switch {
			case !inA && isMap(bv):
				out = diffValues(p, map[string]any{}, bv, out) // each added key on its own line
			case !inB && isMap(av):
				out = diffValues(p, av, map[string]any{}, out)
			case !inA && !ignoredPaths[p]:
				out = append(out, fmt.Sprintf("%s: + %s", p, brief(bv)))
			case !inB && !ignoredPaths[p]:
				out = append(out, fmt.Sprintf("%s: - %s", p, brief(av)))
			case inA && inB:
				out = diffValues(p, av, bv, out)
			}
		}
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			out = diffValues(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
		return out
	}
	if brief(a) != brief(b) {
		out = append(out, fmt.Sprintf("%s: %s -> %s", path, brief(a), brief(b)))
	}
	return out
}

func isMap(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// brief renders a value on one line, as compact JSON cut at 80 bytes.
func brief(v any) string {
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(js) > 80 {
		return string(js[:77]) + "..."
	}
	return string(js)
}
