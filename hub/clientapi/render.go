package clientapi

import (
	"context"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/placement"
)

// run is the controllers' pipeline for one template, storing nothing:
// pipeline.Template, the stages the loops run (bind as the detector, the
// stored claim honoured; place as the scheduling loop, on its view of the
// clusters: members; render as the renderer), on the stored objects with
// the request's laid over them (e). t is the template of ref as the hub
// would store it.
func (b *backend) run(ctx context.Context, ref *hubv1.ObjectRef, t *bind.Template, e *env) (*hubv1.Placement, []*hubv1.RenderedCluster, error) {
	res := pipelineTemplate(ctx, b, t, e)
	pl := &hubv1.Placement{Template: ref}
	if res.Policy != nil {
		pl.Policy = simulatedPolicyRef(*res.Policy)
	}
	switch {
	case res.BindErr != nil:
		pl.Message = res.BindErr.Error()
		return pl, nil, nil
	case !res.Bound:
		pl.Message = "no propagation policy matches the template"
		return pl, nil, nil
	}
	fillPlacement(pl, res.Binding, res.Placed.Err)
	if res.RenderErr != nil {
		pl.Scheduled, pl.Message = false, res.RenderErr.Error()
	}
	return pl, renderedClusters(res.Works), nil
}

// pipelineInput is the pipeline's input for template t on e, as the
// loops would see it at now.
func (b *backend) pipelineInput(t *bind.Template, e *env, now time.Time) pipeline.Input {
	return pipeline.Input{
		Bind: bind.Input{Template: t, PPs: e.pps, CPPs: e.cpps, OverrideExists: e.overrideExists,
			Cause: bind.Cause{Policies: e.given}, Preemption: true,
			AutoNamespace: b.cfg.Namespaces != nil && b.cfg.Namespaces.AutoPropagated(t),
			Current:       bind.CurrentOf(e.binding)},
		Stored: e.binding, StoredID: e.bindingID,
		Members: b.members(e.clusters, !e.givenClusters, now), Clusters: e.clusters,
		ClusterOverrides: e.cops, Overrides: e.ops, Now: now, Place: b.cfg.Scheduling,
	}
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

// renderedClusters is the wire form of the works Simulate shows.
func renderedClusters(ws []pipeline.ClusterWork) []*hubv1.RenderedCluster {
	var out []*hubv1.RenderedCluster
	for _, cw := range ws {
		opts := cw.Work.Upsert.GetApplyOptions()
		out = append(out, &hubv1.RenderedCluster{Cluster: cw.Cluster, ObjectsJson: cw.Work.Upsert.GetManifests(),
			ApplyStrategy:      work.StrategyName(opts.GetStrategy()),
			ConflictResolution: work.ConflictResolutionName(opts.GetConflictResolution())})
	}
	return out
}

// pipelineTemplate runs the pipeline for t on e now.
func pipelineTemplate(ctx context.Context, b *backend, t *bind.Template, e *env) pipeline.Result {
	return pipeline.Template(ctx, b.pipelineInput(t, e, time.Now()), b.interp)
}
