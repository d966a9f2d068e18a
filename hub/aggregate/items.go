package aggregate

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/aggregate/fold"
)

// Observation is what the hub holds for one binding's work in one
// cluster: the last ack and the last status report, and the version of the
// newest of the two.
type Observation struct {
	Ack    *agentv1.Ack
	Report *agentv1.StatusReport
	// Latest is the version of the last ack or report received.
	Latest string
}

// ItemsInput is what BuildItems needs besides the binding.
type ItemsInput struct {
	// Observations by cluster; a target cluster without one keeps its item
	// from the binding (the hub restarted and its agent has not re-reported
	// yet) or gets an empty item.
	Observations map[string]Observation
	// Stale reports whether a cluster's lease is Unknown (or it has none
	// after the start-up grace).
	Stale func(cluster string) bool
	// HealthHook reports whether the interpreter has an InterpretHealth
	// hook for the template's kind; without one a reported object counts
	// as Healthy (interpreter spec §2).
	HealthHook bool
	// Superseded maps a cluster whose assignment (replicas) changed to the
	// version its agent had last acked or reported then: what that version
	// says describes the previous assignment, so the item's health is
	// Unknown until a newer version is observed. Graceful eviction
	// (hub/scheduler) thus waits for the replacement replicas themselves.
	Superseded map[string]string
}

// BuildItems returns one aggregated status item per cluster the binding's
// works are in (targets, clusters being evicted, and for a dependency
// binding the clusters of the bindings that require it), sorted by
// cluster, and the names of the stale ones. A stale item has health
// Unknown and no status (so that it counts nowhere in the template's
// status); applied and appliedMessage are kept.
func BuildItems(b *workv1alpha1.ResourceBinding, in ItemsInput) (items []configv1alpha1.AggregatedStatusItem, stale []string) {
	prev := make(map[string]configv1alpha1.AggregatedStatusItem, len(b.Status.AggregatedStatus))
	for _, it := range b.Status.AggregatedStatus {
		prev[it.ClusterName] = it
	}
	wasStale := make(map[string]bool)
	for _, c := range fold.StaleClusters(b) {
		wasStale[c] = true
	}
	for _, cluster := range workClusters(b) {
		it, isStale := configv1alpha1.AggregatedStatusItem{ClusterName: cluster, Health: configv1alpha1.ResourceUnknown}, false
		obs, observed := in.Observations[cluster]
		if observed {
			it = itemOf(cluster, obs, &b.Spec.Resource, in.HealthHook)
		} else if p, ok := prev[cluster]; ok {
			it, isStale = p, wasStale[cluster] // nothing newer: keep what was written
		}
		if v, ok := in.Superseded[cluster]; ok && (!observed || obs.Latest == v) {
			it.Health = configv1alpha1.ResourceUnknown
		}
		if isStale || (in.Stale != nil && in.Stale(cluster)) {
			it.Health, it.Status = configv1alpha1.ResourceUnknown, nil
			stale = append(stale, cluster)
		}
		items = append(items, it)
	}
	return items, stale
}

// workClusters are the clusters holding a work of b, sorted.
func workClusters(b *workv1alpha1.ResourceBinding) []string {
	set := make(map[string]bool)
	for _, t := range b.Spec.Clusters {
		set[t.Name] = true
	}
	for _, t := range b.Spec.GracefulEvictionTasks {
		set[t.FromCluster] = true
	}
	if b.Spec.Placement == nil {
		for _, s := range b.Spec.RequiredBy {
			for _, t := range s.Clusters {
				set[t.Name] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// itemOf builds the item of one cluster from what its agent sent. Applied
// comes from the ack of the latest version, else from the template's
// manifest in the report, else from an older ack. Health comes from the
// report only if it is of the latest version (else Unknown); its status is
// kept either way, the last the member said.
func itemOf(cluster string, obs Observation, res *workv1alpha1.ObjectReference, healthHook bool) configv1alpha1.AggregatedStatusItem {
	it := configv1alpha1.AggregatedStatusItem{ClusterName: cluster, Health: configv1alpha1.ResourceUnknown}
	m := templateManifest(obs.Report, res)
	switch {
	case obs.Ack != nil && obs.Ack.GetVersion() == obs.Latest:
		it.Applied, it.AppliedMessage = ackApplied(obs.Ack)
	case m != nil:
		it.Applied, it.AppliedMessage = m.GetApplied(), m.GetMessage()
	case obs.Ack != nil:
		it.Applied, it.AppliedMessage = ackApplied(obs.Ack)
	}
	if m == nil {
		return it
	}
	if raw := m.GetStatusJson(); len(raw) > 0 && agentapi.ValidateStatusJSON(raw) == nil {
		// Report refuses invalid JSON; checked again because a raw
		// extension that is not JSON makes the binding unencodable.
		it.Status = &runtime.RawExtension{Raw: append([]byte(nil), raw...)}
	}
	if obs.Report.GetVersion() != obs.Latest {
		return it // a newer version was acked: the report's health is about the old one
	}
	it.Health = health(m.GetHealth(), it.Applied, healthHook)
	return it
}

func ackApplied(a *agentv1.Ack) (bool, string) {
	if a.GetResult() == agentv1.ApplyResult_APPLY_RESULT_APPLIED {
		return true, ""
	}
	return false, a.GetMessage()
}

// health maps the agent's health. An object the agent could not judge
// counts as Healthy when the interpreter has no health hook for its kind
// and it is applied (Karmada: no hook, Healthy).
func health(h agentv1.Health, applied, hook bool) configv1alpha1.ResourceHealth {
	switch h {
	case agentv1.Health_HEALTH_HEALTHY:
		return configv1alpha1.ResourceHealthy
	case agentv1.Health_HEALTH_UNHEALTHY:
		return configv1alpha1.ResourceUnhealthy
	}
	if !hook && applied {
		return configv1alpha1.ResourceHealthy
	}
	return configv1alpha1.ResourceUnknown
}

// templateManifest is the report's status of the template itself: the
// manifest with its group, kind, namespace and name, or the only manifest.
func templateManifest(r *agentv1.StatusReport, res *workv1alpha1.ObjectReference) *agentv1.ManifestStatus {
	ms := r.GetManifests()
	gv, _ := schema.ParseGroupVersion(res.APIVersion)
	for _, m := range ms {
		id := m.GetIdentity()
		if id.GetGroup() == gv.Group && id.GetKind() == res.Kind && id.GetNamespace() == res.Namespace && id.GetName() == res.Name {
			return m
		}
	}
	if len(ms) == 1 {
		return ms[0]
	}
	return nil
}
