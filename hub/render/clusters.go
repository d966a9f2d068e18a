package render

import (
	"fmt"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/overrides"
)

// applyCluster keeps a stored Cluster. A new cluster gets every work that
// targets it; a cluster whose override-relevant properties
// (overrides.SameForOverrides: name, labels, annotations, provider,
// region, zones) changed gets the works that some override
// policy may treat differently re-rendered; heartbeats that only change
// status re-render nothing. A deleted cluster loses its works.
func (in *inputs) applyCluster(name string, o *view.Object) error {
	old := in.clusters[name]
	if o == nil {
		delete(in.clusters, name)
		in.dropped = append(in.dropped, name)
		return nil
	}
	if o.Err != nil {
		return fmt.Errorf("decode cluster %s: %w", name, o.Err)
	}
	// A copy of the view's, named by its key, without the status that
	// heartbeats change and no render reads.
	stored := o.Value.(*clusterv1alpha1.Cluster)
	c := &clusterv1alpha1.Cluster{TypeMeta: stored.TypeMeta, ObjectMeta: stored.ObjectMeta, Spec: stored.Spec}
	c.Name = name
	in.clusters[name] = c
	switch {
	case old == nil:
		in.markTargeting(name, false)
	case !overrides.SameForOverrides(old, c):
		in.markTargeting(name, true)
	}
	return nil
}

// markTargeting marks, for cluster, the works of the bindings that target
// it; with overridden, only those of templates some override policy
// selects.
func (in *inputs) markTargeting(cluster string, overridden bool) {
	if in.loading {
		return
	}
	for key, b := range in.bindings {
		if _, ok := work.ReplicasFor(b, cluster); !ok {
			continue
		}
		if overridden && !in.overridable(key) {
			continue
		}
		in.markCluster(key, cluster)
	}
}

// overridable reports whether some override policy selects the template
// of key.
func (in *inputs) overridable(key string) bool {
	t, ok := in.templates[key]
	if !ok {
		return false
	}
	cops, ops := in.candidates(t)
	return len(cops)+len(ops) > 0
}
