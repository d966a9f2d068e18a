package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/fleet"
)

// applyExamples applies every *.yaml file of dir in one request (all or
// nothing) and returns the templates among them (the objects that are not
// Tether's or Karmada's own kinds), in input order.
func applyExamples(ctx context.Context, c *fleet.Client, dir string, out io.Writer) ([]*hubv1.ObjectRef, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.yaml in %s", dir)
	}
	slices.Sort(files)
	var all bytes.Buffer
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		all.WriteString("\n---\n")
		all.Write(data)
	}
	resp, err := c.Apply(ctx, all.Bytes())
	if err != nil {
		return nil, err
	}
	var templates []*hubv1.ObjectRef
	for _, r := range resp.GetResults() {
		outcome := strings.ToLower(strings.TrimPrefix(r.GetOutcome().String(), "APPLY_OUTCOME_"))
		fmt.Fprintf(out, "   %-10s %s\n", outcome, fleet.RefString(r.GetRef()))
		if !ownKind(r.GetRef().GetApiVersion()) {
			templates = append(templates, r.GetRef())
		}
	}
	// The template the demo waits for leads the table.
	slices.SortStableFunc(templates, func(a, b *hubv1.ObjectRef) int {
		return boolRank(isNginx(b)) - boolRank(isNginx(a))
	})
	return templates, nil
}

func isNginx(r *hubv1.ObjectRef) bool {
	return r.GetKind() == nginx.GetKind() && r.GetNamespace() == nginx.GetNamespace() && r.GetName() == nginx.GetName()
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ownKind reports whether apiVersion is one of Tether's groups (or
// Karmada's aliases of them): policies rather than templates.
func ownKind(apiVersion string) bool {
	group := schema.FromAPIVersionAndKind(apiVersion, "").Group
	return strings.HasSuffix(group, ".tether.io") || strings.HasSuffix(group, ".karmada.io")
}

// printTable prints, per template, where it runs (the hub's placement) and
// how it is doing in each member (read from the member's API server), then
// the hub's aggregated status.
func printTable(ctx context.Context, out io.Writer, c *fleet.Client, f *fleet.Fleet, templates []*hubv1.ObjectRef) {
	fmt.Fprintln(out, "\nPlacement (from the hub) and status (from each member, then aggregated by the hub):")
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TEMPLATE\tCLUSTER\tREPLICAS\tREADY\tDETAIL")
	for _, ref := range templates {
		name := ref.GetKind() + " " + ref.GetName()
		rows := placementRows(ctx, c, f, ref)
		for i, r := range rows {
			if i > 0 {
				name = ""
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", name, r.cluster, r.replicas, r.ready, r.detail)
		}
		if agg, ok := aggregated(ctx, c, ref); ok {
			fmt.Fprintf(tw, "  \t(hub)\t%s\t%s\t%s\n", agg.replicas, agg.ready, agg.detail)
		}
	}
	tw.Flush()
}

// row is one line of the table.
type row struct{ cluster, replicas, ready, detail string }

// placementRows lists the clusters a template runs in, with the replicas
// the hub assigned and what the member reports. A template without a
// placement of its own (a dependency propagated with another) is listed
// in the members that hold it.
func placementRows(ctx context.Context, c *fleet.Client, f *fleet.Fleet, ref *hubv1.ObjectRef) []row {
	placed := map[string]string{}
	if p, err := c.GetPlacement(ctx, ref); err == nil {
		for _, cp := range p.GetClusters() {
			placed[cp.GetCluster()] = fmt.Sprint(cp.GetReplicas())
		}
	}
	var rows []row
	for _, cl := range f.Kit.Clusters {
		replicas, isPlaced := placed[cl.Name]
		obj, err := cl.Dynamic().Resource(gvrOf(ref)).Namespace(ref.GetNamespace()).Get(ctx, ref.GetName(), metav1.GetOptions{})
		switch {
		case err != nil && !isPlaced:
			continue
		case err != nil:
			rows = append(rows, row{cl.Name, replicas, "-", "not in the member yet"})
		case !isPlaced:
			rows = append(rows, row{cl.Name, "-", "-", "present: a dependency (propagateDeps)"})
		default:
			rows = append(rows, memberRow(cl.Name, replicas, obj))
		}
	}
	if len(rows) == 0 {
		rows = append(rows, row{"-", "-", "-", "not placed (no matching policy?)"})
	}
	return rows
}

// memberRow describes a workload as its member reports it.
func memberRow(cluster, replicas string, obj *unstructured.Unstructured) row {
	ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
	want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		return row{cluster, replicas, "-", "present"}
	}
	detail := "image " + firstImage(obj)
	if region := obj.GetLabels()["tether.io/region"]; region != "" {
		detail += ", label tether.io/region=" + region
	}
	if obj.GetKind() == "CloneSet" {
		detail += " (no OpenKruise controller: pods never start)"
	}
	return row{cluster, replicas, fmt.Sprintf("%d/%d", ready, want), detail}
}

// aggregated is the hub's folded status of a workload; ok is false for
// kinds without replicas.
func aggregated(ctx context.Context, c *fleet.Client, ref *hubv1.ObjectRef) (row, bool) {
	obj, err := c.Get(ctx, ref)
	if err != nil {
		return row{}, false
	}
	want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		return row{}, false
	}
	st := func(field string) int64 {
		v, _, _ := unstructured.NestedInt64(obj.Object, "status", field)
		return v
	}
	return row{"(hub)", fmt.Sprint(want), fmt.Sprintf("%d/%d", st("readyReplicas"), want),
		fmt.Sprintf("aggregated: %d replicas, %d ready, %d available, %d updated",
			st("replicas"), st("readyReplicas"), st("availableReplicas"), st("updatedReplicas"))}, true
}

// firstImage is the first container image of a workload's pod template.
func firstImage(obj *unstructured.Unstructured) string {
	containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return "-"
	}
	m, _ := containers[0].(map[string]any)
	image, _ := m["image"].(string)
	return image
}

// gvrOf maps the examples' kinds to their resources. The demo knows its
// own examples; other kinds fall back to the lower-case plural.
func gvrOf(ref *hubv1.ObjectRef) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(ref.GetApiVersion())
	return gv.WithResource(strings.ToLower(ref.GetKind()) + "s")
}

// printNext prints what to try while the demo runs.
func printNext(out io.Writer, dir string, f *fleet.Fleet) {
	rel := func(path string) string {
		if r, err := filepath.Rel(mustGetwd(), path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return path
	}
	conf := rel(filepath.Join(f.Dir, fileConfig))
	fmt.Fprintf(out, `
The hub listens on %s; every process is listed in %s.
Try, from another terminal in this directory:

  TETHER_CONFIG=%[3]s bin/tetherctl get deployments -A
  TETHER_CONFIG=%[3]s bin/tetherctl placement deployment/nginx
  TETHER_CONFIG=%[3]s bin/tetherctl describe deployment nginx
  TETHER_CONFIG=%[3]s bin/tetherctl clusters
  KUBECONFIG=%[4]s kubectl get deploy,configmap,pods -o wide
  KUBECONFIG=%[5]s kubectl get deploy nginx -o jsonpath='{.spec.template.spec.containers[0].image}{"\n"}'
  KUBECONFIG=%[4]s kubectl get nodes -L topology.kubernetes.io/region

  Change examples/nginx.yaml (e.g. replicas: 14), then
  TETHER_CONFIG=%[3]s bin/tetherctl apply -f examples/

Notes:
  - The CloneSet is placed and applied to edge-1 and edge-2, but its pods never
    start: the kit's clusters have a minimal CloneSet CRD and no OpenKruise
    controller, so its ready count stays 0 (the demo waits for nginx only).
  - Pods run on kwok fake nodes: they become Ready without pulling images, so
    the per-region registry mirrors of examples/overrides.yaml need not exist.
  - Each agent reports its cluster's region, provider and labels
    (tether-agent --region/--provider/--labels); the override policies
    select clusters by region.
  - Logs: %[6]s, %[7]s/agents/NAME/agent.log, %[7]s/clusters/NAME/*.log

Press Ctrl-C to stop every process of the demo.
`, f.HubAddr, rel(filepath.Join(f.Dir, filePIDs)), conf,
		rel(filepath.Join(f.Dir, "clusters", "edge-1", "kubeconfig")),
		rel(filepath.Join(f.Dir, "clusters", "regional-1", "kubeconfig")),
		rel(filepath.Join(f.Dir, "hub.log")), rel(f.Dir))
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}
