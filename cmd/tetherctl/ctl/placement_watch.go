package ctl

// placement -w: stream placements, of one template (WatchPlacement) or of
// every selected template of a kind (WatchPlacements), one row per change.

import (
	"context"
	"fmt"
	"iter"
	"strings"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

const placementWatchLong = `

"placement KIND/NAME -w" streams that template's placement, and
"placement KIND -w [-l SELECTOR] [-n NS | -A]" the placements of every
template of the kind the selector matches: first the current ones, then
one row per change of a template or its binding, in the hub's order
(REVISION). A broken connection is resumed from the last revision printed.`

// placementWatchFlags are placement's flags for -w.
type placementWatchFlags struct {
	watch, allNamespaces bool
	selector             string
}

// placementRow is one streamed placement.
type placementRow struct {
	event    string
	pl       *hubv1.Placement
	revision int64
}

func runPlacementWatch(ctx context.Context, s IO, arg, namespace, output string, f placementWatchFlags) error {
	if output != formatTable {
		return fmt.Errorf("placement -w prints a table only; drop -o %s", output)
	}
	kind, name, _ := strings.Cut(arg, "/")
	k, err := resolveKind(ctx, kind)
	if err != nil {
		return err
	}
	if !k.template {
		return fmt.Errorf("%s is not a resource template; only templates have a placement", k.kind)
	}
	if namespace == "" && !f.allNamespaces {
		namespace = "default"
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	rows := placementsOf(ctx, c, k.ref(namespace, ""), f.selector)
	if name != "" {
		rows = placementOf(ctx, c, k.ref(namespace, name))
	}
	return quiet(ctx, printPlacementRows(s, rows))
}

// placementsOf streams WatchPlacements of the templates like ref (no
// name), skipping the synced mark.
func placementsOf(ctx context.Context, c *client.Client, ref *hubv1.ObjectRef, selector string) iter.Seq2[placementRow, error] {
	sel := client.Selector{APIVersion: ref.GetApiVersion(), Kind: ref.GetKind(), Namespace: ref.GetNamespace(), LabelSelector: selector}
	return func(yield func(placementRow, error) bool) {
		for m, err := range c.WatchPlacements(ctx, sel, 0) {
			if m.GetSynced() {
				continue
			}
			if !yield(placementRow{eventName(m.GetType()), m.GetPlacement(), m.GetPlacement().GetRevision()}, err) {
				return
			}
		}
	}
}

// placementOf streams WatchPlacement of one template.
func placementOf(ctx context.Context, c *client.Client, ref *hubv1.ObjectRef) iter.Seq2[placementRow, error] {
	return func(yield func(placementRow, error) bool) {
		for m, err := range c.WatchPlacement(ctx, ref, 0) {
			if !yield(placementRow{eventName(m.GetType()), m.GetPlacement(), m.GetPlacement().GetRevision()}, err) {
				return
			}
		}
	}
}

func eventName(t hubv1.EventType) string { return strings.TrimPrefix(t.String(), "EVENT_TYPE_") }

// printPlacementRows prints a row per placement until rows end.
func printPlacementRows(s IO, rows iter.Seq2[placementRow, error]) error {
	const format = "%-9s %-12s %-24s %-9s %-30s %s\n"
	fmt.Fprintf(s.Out, format, "EVENT", "NAMESPACE", "NAME", "SCHEDULED", "CLUSTERS", "REVISION")
	for r, err := range rows {
		if err != nil {
			return err
		}
		var clusters []string
		for _, c := range r.pl.GetClusters() {
			clusters = append(clusters, fmt.Sprintf("%s:%d", c.GetCluster(), c.GetReplicas()))
		}
		fmt.Fprintf(s.Out, format, r.event, orNone(r.pl.GetTemplate().GetNamespace()), r.pl.GetTemplate().GetName(),
			fmt.Sprint(r.pl.GetScheduled()), orNone(strings.Join(clusters, ",")), fmt.Sprint(r.revision))
	}
	return nil
}
