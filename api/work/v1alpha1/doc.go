// Package v1alpha1 holds the work.tether.io/v1alpha1 bindings: a
// ResourceBinding (or ClusterResourceBinding, for a cluster-scoped template)
// ties one template to the placement of the policy that claimed it, records
// the scheduler's result (target clusters and replicas), pending graceful
// evictions, and the per-cluster statuses the agents reported.
//
// The shapes are Karmada's work.karmada.io/v1alpha2 ResourceBinding, which
// api/codec accepts as an alias. Replica requirements, components and
// aggregated status items are the interpreter's types from
// api/config/v1alpha1; placement and failover are the policy types from
// api/policy/v1alpha1.
//
// It imports only Kubernetes API packages, api/config/v1alpha1 and
// api/policy/v1alpha1.
package v1alpha1
