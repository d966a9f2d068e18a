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
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/render"
	"github.com/tetherproj/tether/hub/scheduler"
)

// run is the controllers' pipeline for one template, storing nothing,
// with each step's own function:
//
//  1. the bind stage, as the detector runs it (bind.Wanted: the stored
//     claim kept unless preempted or released, else the best matching
//     policy; namespace auto-propagation for a Namespace none matches);
//  2. the binding, as the detector would write it (bind.Merge onto the
//     stored binding, if any);
//  3. the scheduling loop's decision for it (scheduler.Step, on the
//     loop's view of the clusters: members);
//  4. each target cluster's work, as the renderer computes it
//     (render.Render, with render.Candidates's override policies).
//
// t is the template of ref as the hub would store it.
func (b *backend) run(ctx context.Context, ref *hubv1.ObjectRef, t *bind.Template, e *env) (*hubv1.Placement, []*hubv1.RenderedCluster, error) {
	pl := &hubv1.Placement{Template: ref}
	want, policy, ok, err := b.want(ctx, t, e)
	if policy != nil {
		pl.Policy = simulatedPolicyRef(*policy)
	}
	switch {
	case err != nil:
		pl.Message = err.Error()
		return pl, nil, nil
	case !ok:
		pl.Message = "no propagation policy matches the template"
		return pl, nil, nil
	}
	rb := bind.Merge(e.binding, t, want)
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

// want is the detector's decision for t (the bind stage, bind.Wanted, on
// the same inputs as the detector's): the policy that claims it, keeps it
// or takes it, or namespace auto-propagation, and the binding's spec; the
// stored binding's claim is honoured as the detector honours it. policy
// is the policy the binding then belongs to (nil for none); ok is false
// when t would have no binding of its own, and with an error.
func (b *backend) want(ctx context.Context, t *bind.Template, e *env) (want bind.Want, policy *bind.PolicyRef, ok bool, err error) {
	in := bind.Input{Template: t, PPs: e.pps, CPPs: e.cpps, OverrideExists: e.overrideExists,
		Cause: bind.Cause{Policies: e.given}, Preemption: true,
		AutoNamespace: b.cfg.Namespaces != nil && b.cfg.Namespaces.AutoPropagated(t),
		Current:       bind.CurrentOf(e.binding)}
	dec, want, err := bind.Wanted(ctx, in, b.interp)
	if e.binding != nil {
		want.RequiredBy = e.binding.Spec.RequiredBy
	}
	switch {
	case dec.Verdict == bind.Bind:
		policy = &dec.Policy.Ref
	case dec.Verdict == bind.Keep && in.Current.Claim != nil:
		policy = &in.Current.Claim.Policy
	}
	if err != nil {
		return want, policy, false, err
	}
	return want, policy, dec.Verdict != bind.Wait, nil
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

func simulatedPolicyRef(p bind.PolicyRef) *hubv1.ObjectRef {
	r := &hubv1.ObjectRef{ApiVersion: policyv1alpha1.GroupVersion.String(), Kind: policyv1alpha1.KindPropagationPolicy,
		Namespace: p.Namespace, Name: p.Name}
	if p.Cluster {
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
