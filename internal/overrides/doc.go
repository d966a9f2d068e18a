// Package overrides applies Karmada-compatible ClusterOverridePolicies and
// OverridePolicies to a resource template for one target cluster. It is
// pure: Apply takes the template, the cluster and the policies and returns
// the object to send to that cluster plus the rules it applied, producing
// exactly what Karmada v1.18.2's override manager produces for the same
// input, quirks included (see README.md for the few places it does not).
//
// Usage:
//
//	res, err := overrides.Apply(template, cluster, clusterOverridePolicies, overridePolicies)
//	if err != nil {
//		// *overrides.Error: which policy, rule and overrider failed; no
//		// object may be sent to this cluster.
//	}
//	annotations, err := res.Annotations() // the applied-overrides records
//
// An overrider's valueFrom (a Tether extension) takes its value from the
// target cluster: its name, a label or an annotation (ClusterValue). Apply
// resolves it per cluster before the overriders run, and a cluster that
// cannot answer fails with an *Error naming the overrider and the key.
// Signature and SameForOverrides say what the rules read of a cluster, so
// that the renderer shares a render only among clusters that get the same
// object and re-renders a cluster whose labels or annotations changed.
//
// The matching helpers SelectorPriority, ResourcePriority, MatchesResource
// and MatchesCluster are exported for the scheduler, the renderer and the
// policy detector, which select resources and clusters with the same rules:
// they are the one implementation of Karmada's implicit selector priority
// and cluster affinity.
package overrides
