package clientapi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/detector"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/render"
	"github.com/tetherproj/tether/hub/scheduler"
)

// run is the controllers' pipeline for one template, storing nothing,
// with each step's own function:
//
//  1. the policy, as the detector chooses it (detector.Choose, ignoring
//     any stored claim; namespace auto-propagation for a Namespace none
//     matches);
//  2. the binding, as the detector would write it (detector.BuildSpec and
//     detector.Merge onto the stored binding, if any);
//  3. the scheduling loop's decision for it (scheduler.Step, on the
//     loop's view of the clusters: members);
//  4. each target cluster's work, as the renderer computes it
//     (render.Render, with render.Candidates's override policies).
//
// t is the template of ref as the hub would store it.
func (b *backend) run(ctx context.Context, ref *hubv1.ObjectRef, t *detector.Template, e *env) (*hubv1.Placement, []*hubv1.RenderedCluster, error) {
	pl := &hubv1.Placement{Template: ref}
	want, ok, err := b.want(ctx, t, e)
	if want.Policy != nil {
		pl.Policy = simulatedPolicyRef(want.Policy)
	}
	switch {
	case err != nil:
		pl.Message = err.Error()
		return pl, nil, nil
	case !ok:
		pl.Message = "no propagation policy matches the template"
		return pl, nil, nil
	}
	rb := detector.Merge(e.binding, t, want)
	if e.binding != nil {
		rb.UID = e.bindingID
	}
	now := time.Now()
	out := scheduler.Step(rb, b.members(e.clusters, !e.givenClusters, now), now, b.cfg.Scheduling)
	rb = out.Binding
	fillPlacement(pl, rb, out.Err)
	rendered, err := b.render(ctx, t.Obj, rb, e)
	if err != nil {
		pl.Scheduled, pl.Message = false, err.Error()
	}
	return pl, rendered, nil
}

// want is the detector's decision for t: the policy that claims it (or
// namespace auto-propagation) and the binding's spec; ok is false when
// no policy matches, and with an error (the policy is set then).
func (b *backend) want(ctx context.Context, t *detector.Template, e *env) (detector.Want, bool, error) {
	var want detector.Want
	if e.binding != nil {
		want.RequiredBy = e.binding.Spec.RequiredBy
	}
	p := detector.Choose(t, e.pps, e.cpps)
	if p == nil && b.cfg.Namespaces != nil && b.cfg.Namespaces.AutoPropagated(t) {
		p, want.Auto = detector.NamespacePolicy(), true
	}
	if p == nil {
		return want, false, nil
	}
	if !want.Auto {
		want.Policy = p
	}
	spec, err := detector.BuildSpec(ctx, t, p, b.interp)
	if err != nil {
		return want, false, err
	}
	want.Spec = spec
	return want, true, nil
}

// fillPlacement sets the scheduler's decision on rb: its clusters, its
// Scheduled condition (or the scheduling error) and the rejections it
// recorded.
func fillPlacement(pl *hubv1.Placement, rb *workv1alpha1.ResourceBinding, schedErr error) {
	for _, tc := range rb.Spec.Clusters {
		pl.Clusters = append(pl.Clusters, &hubv1.ClusterPlacement{Cluster: tc.Name, Replicas: tc.Replicas})
	}
	pl.Scheduled, pl.Message = scheduledState(rb)
	if schedErr != nil {
		pl.Scheduled, pl.Message = false, schedErr.Error()
	}
	rs, _ := placement.Rejections(rb) // written by Step just now, or by the loop
	for _, r := range rs {
		pl.Rejections = append(pl.Rejections, &hubv1.ClusterRejection{Cluster: r.Cluster, Reasons: r.Reasons})
	}
}

func simulatedPolicyRef(p *detector.Policy) *hubv1.ObjectRef {
	r := &hubv1.ObjectRef{ApiVersion: policyv1alpha1.GroupVersion.String(), Kind: policyv1alpha1.KindPropagationPolicy,
		Namespace: p.Ref.Namespace, Name: p.Ref.Name}
	if p.Ref.Cluster {
		r.Kind = policyv1alpha1.KindClusterPropagationPolicy
	}
	return r
}

// render computes the work each of rb's target clusters would receive
// (render.Targets), as the renderer does: clusters not in the snapshot and
// clusters whose dispatching is suspended get none. Every cluster is
// rendered; the errors of those that fail are joined.
func (b *backend) render(ctx context.Context, obj *unstructured.Unstructured, rb *workv1alpha1.ResourceBinding, e *env) ([]*hubv1.RenderedCluster, error) {
	cops, ops := render.Candidates(obj, e.cops, e.ops)
	var out []*hubv1.RenderedCluster
	var failed []string
	for _, tc := range render.Targets(rb) {
		c := clusterNamed(e.clusters, tc.Name)
		if c == nil || render.Suspended(rb, tc.Name) {
			continue
		}
		w, err := render.Render(ctx, render.Input{Template: obj, Binding: rb, Cluster: c, ClusterOverrides: cops, Overrides: ops}, b.interp)
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		opts := w.Upsert.GetApplyOptions()
		out = append(out, &hubv1.RenderedCluster{Cluster: tc.Name, ObjectsJson: w.Upsert.GetManifests(),
			ApplyStrategy:      render.StrategyName(opts.GetStrategy()),
			ConflictResolution: render.ConflictResolutionName(opts.GetConflictResolution())})
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return out, nil
}

func clusterNamed(cs []clusterv1alpha1.Cluster, name string) *clusterv1alpha1.Cluster {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}
