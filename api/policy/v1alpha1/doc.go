// Package v1alpha1 holds the policy.tether.io/v1alpha1 objects users write:
// PropagationPolicy and ClusterPropagationPolicy (which templates go to which
// clusters, with how many replicas) and OverridePolicy and
// ClusterOverridePolicy (how a template is rewritten per cluster), whose
// overriders may take a value from the target cluster (ClusterValueSource,
// a Tether extension: the only field Karmada's types do not have).
//
// The Go types have Karmada's policy.karmada.io/v1alpha1 field names and JSON
// shapes (Karmada v1.18), so that a Karmada policy decodes into them unchanged;
// api/codec accepts both API groups. Each object has SetDefaults, which applies
// the defaults Karmada's CRD schema and mutating webhooks apply, and Validate,
// which applies the rules of Karmada's validating webhooks and CRD schema,
// then refuses the fields of Karmada's YAML that Tether does not
// implement (RefuseUnsupported: cluster failover's purgeMode Directly,
// state preservation, workload affinity, schedule priority, another
// scheduler), and returns errors that name the field path. Accessors such as
// Placement.ReplicaSchedulingType give the effective value of a field whether
// or not the object was defaulted, and Validate gives the same result before
// and after SetDefaults.
//
// SetDefaults does not set metadata.namespace: as in Kubernetes, the API
// server takes it from the request (or the client's default namespace)
// before defaulting, and Validate requires it for namespaced kinds.
//
// RolloutPolicy (how a change of the templates it selects reaches their
// clusters: OCM's rollout vocabulary, Tether's own kind) has its types,
// defaults and validation here; api/codec serves it in policy.tether.io
// only (Karmada's group does not alias it), and hub/rollout honours it.
//
// It imports only Kubernetes API packages and github.com/robfig/cron/v3
// (maintenance windows' schedules, read as Kubernetes CronJobs read them).
package v1alpha1
