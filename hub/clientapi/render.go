package clientapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/detector"
	"github.com/tetherproj/tether/hub/render"
	"github.com/tetherproj/tether/hub/scheduler"
	"github.com/tetherproj/tether/internal/overrides"
)

// run is the detector-free path of one template: choose its policy as the
// detector would (detector.Choose, ignoring any stored claim, or
// namespace auto-propagation for a Namespace none matches), build the
// binding spec (detector.BuildSpec: replicas and requirements from the
// interpreter), schedule, then render each target cluster: replicas
// revised for Divided placements, override policies applied.
func (b *backend) run(ctx context.Context, it *item, e *env) (*hubv1.Placement, []*hubv1.RenderedCluster, error) {
	pl := &hubv1.Placement{Template: it.ref}
	t, err := templateOf(it, e.uid)
	if err != nil {
		return nil, nil, err
	}
	p := detector.Choose(t, e.pps, e.cpps)
	auto := p == nil && b.cfg.Namespaces != nil && b.cfg.Namespaces.AutoPropagated(t)
	if auto {
		p = detector.NamespacePolicy() // no policy to name: namespace auto-propagation
	}
	if p == nil {
		pl.Message = "no propagation policy matches the template"
		return pl, nil, nil
	}
	if !auto {
		pl.Policy = simulatedPolicyRef(p)
	}
	spec, err := detector.BuildSpec(ctx, t, p, b.interp)
	if err != nil {
		pl.Message = err.Error()
		return pl, nil, nil
	}
	in := scheduler.Input{
		Placement: *spec.Placement,
		Clusters:  schedulerClusters(e.clusters, t.Obj.GetAPIVersion(), t.Obj.GetKind()),
		Workload: scheduler.Workload{APIVersion: t.Obj.GetAPIVersion(), Kind: t.Obj.GetKind(), Namespace: t.Obj.GetNamespace(),
			Name: t.Obj.GetName(), UID: e.uid, Replicas: spec.Replicas, Requirements: spec.ReplicaRequirements},
	}
	if e.binding != nil {
		if prev, ok := bindingInput(e.binding, nil); ok {
			in.Previous = prev.Previous
		}
	}
	res, err := scheduler.Schedule(in)
	pl.Rejections = rejectionsOf(res, err)
	if err != nil {
		pl.Message = err.Error()
		return pl, nil, nil
	}
	pl.Scheduled = true
	rendered, err := b.render(ctx, t.Obj, spec.Replicas, in.Placement, res.Clusters, e)
	if err != nil {
		pl.Scheduled, pl.Message = false, err.Error()
	}
	if err := withApplyOptions(rendered, t.Obj, spec); err != nil {
		pl.Scheduled, pl.Message = false, err.Error()
	}
	for _, tc := range res.Clusters {
		pl.Clusters = append(pl.Clusters, &hubv1.ClusterPlacement{Cluster: tc.Name, Replicas: tc.Replicas})
	}
	return pl, rendered, nil
}

// withApplyOptions says in each rendered cluster how its agent would write
// the template: render.ApplyOptions, as for the works the hub sends.
func withApplyOptions(rendered []*hubv1.RenderedCluster, obj *unstructured.Unstructured, spec workv1alpha1.ResourceBindingSpec) error {
	opts, err := render.ApplyOptions(obj, &workv1alpha1.ResourceBinding{Spec: spec})
	if err != nil {
		return err
	}
	for _, r := range rendered {
		r.ApplyStrategy = render.StrategyName(opts.GetStrategy())
		r.ConflictResolution = render.ConflictResolutionName(opts.GetConflictResolution())
	}
	return nil
}

func rejectionsOf(res scheduler.Result, err error) []*hubv1.ClusterRejection {
	rejected := res.Rejected
	var fit *scheduler.FitError
	if errors.As(err, &fit) {
		rejected = fit.Rejected
	}
	var out []*hubv1.ClusterRejection
	for _, r := range rejected {
		out = append(out, &hubv1.ClusterRejection{Cluster: r.Cluster, Reasons: slices.Clone(r.Reasons)})
	}
	return out
}

func simulatedPolicyRef(p *detector.Policy) *hubv1.ObjectRef {
	r := &hubv1.ObjectRef{ApiVersion: policyv1alpha1.GroupVersion.String(), Kind: policyv1alpha1.KindPropagationPolicy,
		Namespace: p.Ref.Namespace, Name: p.Ref.Name}
	if p.Ref.Cluster {
		r.Kind = policyv1alpha1.KindClusterPropagationPolicy
	}
	return r
}

// render computes what each target cluster would receive. Every cluster is
// rendered; the errors of those that fail are joined.
func (b *backend) render(ctx context.Context, obj *unstructured.Unstructured, replicas int32, placement policyv1alpha1.Placement,
	targets []scheduler.TargetCluster, e *env) ([]*hubv1.RenderedCluster, error) {
	var out []*hubv1.RenderedCluster
	var failed []string
	for _, tc := range targets {
		js, err := b.renderOne(ctx, obj, replicas, placement, tc, e)
		if err != nil {
			failed = append(failed, fmt.Sprintf("cluster %s: %v", tc.Name, err))
			continue
		}
		out = append(out, &hubv1.RenderedCluster{Cluster: tc.Name, ObjectsJson: [][]byte{js}})
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("render: %s", strings.Join(failed, "; "))
	}
	return out, nil
}

func (b *backend) renderOne(ctx context.Context, obj *unstructured.Unstructured, replicas int32, placement policyv1alpha1.Placement,
	tc scheduler.TargetCluster, e *env) ([]byte, error) {
	out := obj.DeepCopy()
	divided := placement.ReplicaSchedulingType() == policyv1alpha1.ReplicaSchedulingTypeDivided
	if divided && replicas > 0 && b.interp.HookEnabled(out.GroupVersionKind(), configv1alpha1.InterpreterOperationReviseReplica) {
		revised, err := b.interp.ReviseReplica(ctx, out, int64(tc.Replicas))
		if err != nil {
			return nil, fmt.Errorf("revise replicas: %w", err)
		}
		out = revised
	}
	cluster := clusterNamed(e.clusters, tc.Name)
	res, err := overrides.Apply(out, cluster, e.cops, e.ops)
	if err != nil {
		return nil, err
	}
	return res.Object.MarshalJSON()
}

func clusterNamed(cs []clusterv1alpha1.Cluster, name string) *clusterv1alpha1.Cluster {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	c := &clusterv1alpha1.Cluster{}
	c.Name = name
	return c
}
