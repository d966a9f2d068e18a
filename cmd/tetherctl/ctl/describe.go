package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/hub/aggregate/fold"
)

func init() { commands = append(commands, newDescribe) }

func newDescribe(s IO) *cobra.Command {
	var namespace string
	cmd := &cobra.Command{
		Use:   "describe KIND NAME [-n NS]",
		Short: "show an object, where it runs and its status in each cluster",
		Long: `Shows one object: its metadata; for a template, the policy that placed
it, the clusters it runs in with what each reported (applied, health,
replicas), the clusters turned down and why, and the aggregated status;
for Tether's own kinds, the spec; for a member cluster (describe cluster
NAME), its state, labels, annotations, taints, resource models, capacity,
conditions and the APIs it serves.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if isClusterKind(args[0]) {
				return runDescribeCluster(contextOf(cmd), s, args[1])
			}
			k, err := resolveKind(contextOf(cmd), args[0])
			if err != nil {
				return err
			}
			if namespace == "" {
				namespace = "default"
			}
			return runDescribe(contextOf(cmd), s, k, k.ref(namespace, args[1]))
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", `namespace (default "default")`)
	return cmd
}

// described is what describe reads of an object.
type described struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		Labels            map[string]string `json:"labels"`
		CreationTimestamp time.Time         `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec   json.RawMessage `json:"spec"`
	Status json.RawMessage `json:"status"`
}

func runDescribe(ctx context.Context, s IO, k kindSpec, ref *hubv1.ObjectRef) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	obj, err := c.Get(ctx, ref)
	if err != nil {
		return err
	}
	var d described
	if err := json.Unmarshal(obj.GetObjectJson(), &d); err != nil {
		return fmt.Errorf("decode %s %s: %w", ref.GetKind(), ref.GetName(), err)
	}
	w := s.Out
	fmt.Fprintf(w, "Name:         %s\n", d.Metadata.Name)
	if d.Metadata.Namespace != "" {
		fmt.Fprintf(w, "Namespace:    %s\n", d.Metadata.Namespace)
	}
	fmt.Fprintf(w, "Kind:         %s (%s)\n", d.Kind, d.APIVersion)
	fmt.Fprintf(w, "Labels:       %s\n", labelString(d.Metadata.Labels))
	if !d.Metadata.CreationTimestamp.IsZero() {
		fmt.Fprintf(w, "Created:      %s (%s ago)\n", d.Metadata.CreationTimestamp.UTC().Format(time.RFC3339), age(d.Metadata.CreationTimestamp, time.Now()))
	}
	fmt.Fprintf(w, "Revision:     %d\n", obj.GetRevision())
	if !k.template {
		return section(w, "Spec", d.Spec)
	}
	pl, err := c.GetPlacement(ctx, obj.GetRef())
	if err != nil {
		return err
	}
	binding, err := bindingOf(ctx, c, pl)
	if err != nil {
		return err
	}
	describePlacement(w, pl, binding)
	return section(w, "Status", d.Status)
}

// bindingOf reads the placement's binding for its per-cluster status; nil
// when there is none (yet).
func bindingOf(ctx context.Context, c *client.Client, pl *hubv1.Placement) (*workv1alpha1.ResourceBinding, error) {
	if pl.GetBinding() == nil {
		return nil, nil
	}
	obj, err := c.Get(ctx, pl.GetBinding())
	if status.Code(err) == codes.NotFound { // deleted meanwhile
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var b workv1alpha1.ResourceBinding
	if err := json.Unmarshal(obj.GetObjectJson(), &b); err != nil {
		return nil, fmt.Errorf("decode binding %s: %w", pl.GetBinding().GetName(), err)
	}
	return &b, nil
}

// describePlacement writes the policy, the scheduling state, a row per
// target cluster with what it reported, and the rejected clusters.
func describePlacement(w io.Writer, pl *hubv1.Placement, b *workv1alpha1.ResourceBinding) {
	fmt.Fprintf(w, "Policy:       %s\n", refString(pl.GetPolicy()))
	scheduled := "True"
	if !pl.GetScheduled() {
		scheduled = "False"
	}
	if pl.GetMessage() != "" {
		scheduled += " (" + pl.GetMessage() + ")"
	}
	fmt.Fprintf(w, "Scheduled:    %s\n", scheduled)
	fmt.Fprintln(w, "Clusters:")
	if len(pl.GetClusters()) == 0 {
		fmt.Fprintln(w, "  <none>")
	} else {
		t := newTable(&indented{w: w}, "CLUSTER", "REPLICAS", "APPLIED", "HEALTH", "READY")
		items := map[string]configv1alpha1.AggregatedStatusItem{}
		var stale []string
		if b != nil {
			for _, it := range b.Status.AggregatedStatus {
				items[it.ClusterName] = it
			}
			stale = fold.StaleClusters(b)
		}
		for _, c := range pl.GetClusters() {
			it, ok := items[c.GetCluster()]
			applied, health, ready := "-", "Unknown", "-"
			if ok {
				applied, health, ready = appliedString(it), string(it.Health), readyOf(it.Status)
			}
			if slices.Contains(stale, c.GetCluster()) {
				health += " (stale)"
			}
			t.row(c.GetCluster(), fmt.Sprint(c.GetReplicas()), applied, orDash(health), ready)
		}
		_ = t.flush()
	}
	if len(pl.GetRejections()) > 0 {
		fmt.Fprintln(w, "Rejected:")
		for _, r := range pl.GetRejections() {
			fmt.Fprintf(w, "  %s: %s\n", r.GetCluster(), strings.Join(r.GetReasons(), "; "))
		}
	}
}

func appliedString(it configv1alpha1.AggregatedStatusItem) string {
	if it.Applied {
		return "True"
	}
	if it.AppliedMessage != "" {
		return "False: " + it.AppliedMessage
	}
	return "False"
}

// readyOf summarizes a member's workload status as ready/replicas when it
// has those fields.
func readyOf(raw any) string {
	js, err := json.Marshal(raw)
	if err != nil {
		return "-"
	}
	var st struct {
		Replicas      *int64 `json:"replicas"`
		ReadyReplicas int64  `json:"readyReplicas"`
	}
	if json.Unmarshal(js, &st) != nil || st.Replicas == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", st.ReadyReplicas, *st.Replicas)
}

// section writes a titled, indented YAML block; nothing for an empty one.
func section(w io.Writer, title string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		fmt.Fprintf(w, "%s:       <none>\n", title)
		return nil
	}
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s:\n", title)
	_, err = (&indented{w: w}).Write(y)
	return err
}

// indented prefixes every line written through it with two spaces.
type indented struct {
	w       io.Writer
	midLine bool
}

func (i *indented) Write(p []byte) (int, error) {
	var out []byte
	for _, c := range p {
		if !i.midLine {
			out = append(out, ' ', ' ')
		}
		out = append(out, c)
		i.midLine = c != '\n'
	}
	if _, err := i.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
