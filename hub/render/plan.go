package render

import (
	"context"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/internal/overrides"
)

// planKey computes the new state of the works of key on the clusters in
// only (nil: every cluster). Clusters whose render input is the same (the
// same replicas, the same override rules selecting them) are rendered once:
// Render's output depends on the cluster only through those.
func (r *Renderer) planKey(ctx context.Context, key string, only map[string]bool) *plan {
	p, jobs := r.preparePlan(key, only)
	p.set, p.failed = r.runJobs(ctx, key, jobs)
	return p
}

// preparePlan is planKey without the renders: the plan, whose set is
// empty, and the renders that fill it (runJobs). It reads the inputs, so
// only Run's goroutine calls it; the jobs hold what they need.
func (r *Renderer) preparePlan(key string, only map[string]bool) (*plan, []renderJob) {
	placed := r.state.placed(key)
	t, b := r.in.templates[key], r.in.bindings[key]
	if (t == nil || b == nil) && r.in.undecodable(key) {
		return r.keepPlan(key), nil // a decode error is never a deletion
	}
	p := &plan{key: key, set: map[string]*agentv1.WorkUpsert{}}
	if t == nil || b == nil {
		p.policy = r.state.lastPolicy(key)
		p.reason = agentv1.DeleteReason_DELETE_REASON_BINDING_DELETED
		if t == nil {
			p.reason = agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED
		}
		for _, c := range placed {
			p.drop = append(p.drop, c)
		}
		return r.holdDrops(p), nil
	}
	p.exists, p.policy, p.vouch = true, work.DeletionPolicy(b), map[string]bool{}
	p.reason, p.evicting = agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED, map[string]bool{}
	jobs := r.targetJobs(p, t, b, only)
	wasEvicting := r.state.evicting(key)
	for _, c := range placed {
		switch {
		case p.vouch[c]:
		case work.Evicting(b, c):
			p.vouch[c], p.evicting[c] = true, true // keeps what it has until the task ends
		case work.Suspended(b, c):
			p.vouch[c] = true // keeps what it has
		case only == nil || only[c]:
			p.drop = append(p.drop, c)
			if wasEvicting[c] {
				p.failedOver = append(p.failedOver, c)
			}
		}
	}
	return r.holdDrops(p), jobs
}

// keepPlan leaves every cluster of key the version it has and reports
// none of its removals: for a key whose inputs do not decode, or whose
// render panicked. Unknown means keep: every cluster the key may be held
// by gets Keep from Gone, and the renderer is not authoritative for them
// (unsureOf), until the key renders.
func (r *Renderer) keepPlan(key string) *plan {
	return &plan{key: key, policy: r.state.lastPolicy(key), exists: len(r.state.placed(key)) > 0,
		set: map[string]*agentv1.WorkUpsert{}, unsure: r.unsureOf(key, nil, nil)}
}

// holdDrops keeps the clusters p would drop while the hub is not
// authoritative (its store lost or regressed data, hub/authority): they
// keep the version they have until an operator accepts the store.
func (r *Renderer) holdDrops(p *plan) *plan {
	if len(p.drop) == 0 {
		return p
	}
	ok, reason := r.authoritative()
	if ok {
		return p
	}
	r.log.Warn("work removal held back: the hub is not authoritative", "work", p.key, "clusters", p.drop, "reason", reason)
	if p.vouch == nil {
		p.exists = true // the key stays published where it is placed
	}
	p.vouch, p.drop = nil, nil
	return p
}

// renderJob is one render, shared by the clusters of one signature.
type renderJob struct {
	in       work.Input
	clusters []string
}

// targetJobs vouches for every target of b and returns the renders of the
// targets in only. A target that is not a known cluster, whose
// dispatching is suspended, or that a rollout holds (rollout.go), keeps
// what it has.
func (r *Renderer) targetJobs(p *plan, t *unstructured.Unstructured, b *workv1alpha1.ResourceBinding, only map[string]bool) []renderJob {
	pc := r.pace(p.key, t)
	if pc != nil {
		t = pc.template
	}
	cops, ops := r.in.candidates(t)
	divided := work.Divided(b)
	var jobs []renderJob
	bySig := map[string]int{}
	for _, tc := range work.Targets(b) {
		p.vouch[tc.Name] = true
		c := r.in.clusters[tc.Name]
		if (only != nil && !only[tc.Name]) || c == nil || work.Suspended(b, tc.Name) || (pc != nil && pc.holds(tc.Name)) {
			continue
		}
		sig := signature(divided, tc.Replicas, c, cops, ops) + perCluster(t, tc.Name)
		i, ok := bySig[sig]
		if !ok {
			i, bySig[sig] = len(jobs), len(jobs)
			jobs = append(jobs, renderJob{in: work.Input{Template: t, Binding: b, Cluster: c, ClusterOverrides: cops, Overrides: ops}})
		}
		jobs[i].clusters = append(jobs[i].clusters, tc.Name)
	}
	return jobs
}

// runJobs renders jobs: the work of each cluster, and whether some render
// failed (those clusters keep their current version). It reads only the
// jobs, so it may run off Run's goroutine.
func (r *Renderer) runJobs(ctx context.Context, key string, jobs []renderJob) (map[string]*agentv1.WorkUpsert, bool) {
	set := map[string]*agentv1.WorkUpsert{}
	failed := false
	for _, j := range jobs {
		renderFault(key)
		w, err := r.renderWork(ctx, j.in)
		if err != nil {
			r.log.Warn("work not rendered; the clusters keep their current version", "work", key, "clusters", j.clusters, "error", err)
			failed = true
			continue
		}
		for _, c := range j.clusters {
			set[c] = w.Upsert
		}
	}
	return set, failed
}

// signature identifies a cluster's render input for one template: its
// replicas when they are divided, and what the override rules read of it
// (overrides.Signature).
func signature(divided bool, replicas int32, c *clusterv1alpha1.Cluster,
	cops []policyv1alpha1.ClusterOverridePolicy, ops []policyv1alpha1.OverridePolicy) string {
	var sb strings.Builder
	if divided {
		sb.WriteString(strconv.FormatInt(int64(replicas), 10))
	}
	sb.WriteByte(':')
	sb.WriteString(overrides.Signature(c, cops, ops))
	return sb.String()
}
