// Package quota is the FederatedResourceQuota decision, pure: what a
// binding uses of its namespace's quota (Usage, UsageByCluster: Karmada's
// CalculateResourceUsage, replicas in every target cluster times the
// per-replica requests) and whether a template's new usage fits a quota
// beside what the namespace already uses (Check, Karmada's
// resourcebinding webhook rule). The hub's Apply refuses a template or a
// (Cluster)PropagationPolicy with Check's error; the same functions give
// the quota's status (Status: usage overall and per cluster, computed
// from the bindings, with a static assignment's hard for the clusters it
// names). The ResourceQuotas of staticAssignments are works the renderer
// (hub/render) sends to the clusters named.
//
// # Usage
//
//	old, next := quota.Usage(storedBinding), quota.Usage(newBinding)
//	if err := quota.Check(frq, namespaceUsed, old, next); err != nil {
//		// *quota.ExceededError: which quota and resource, used,
//		// requested and allowed.
//	}
//
// It imports api/ and Kubernetes API machinery only.
package quota
