// Package work is the pipeline's render stage, pure: one template's work
// for one cluster (Render): replicas revised by the interpreter for a
// Divided binding, cluster and namespace override policies applied in
// Karmada's order (Candidates picks those that can apply), the fields a
// member must not get removed (Prune, Karmada's RemoveIrrelevantFields),
// ownership labels and annotations naming the binding (LabelManaged,
// KeyOf, PermanentID), the apply options (ApplyStrategyOf, ApplyOptions)
// and the version, a hash of the sealed content. Targets, ReplicasFor,
// Suspended and Evicting read a binding's target clusters. A
// FederatedResourceQuota's staticAssignments render as ResourceQuotas
// (RenderQuota, for the clusters of its QuotaBinding). The renderer
// (hub/render) calls Render for every (binding, cluster) it serves;
// Simulate (hub/clientapi, through hub/pipeline) calls it on the same
// inputs.
//
// # Usage
//
//	cops, ops := work.Candidates(template, storedCOPs, storedOPs)
//	w, err := work.Render(ctx, work.Input{Template: template, Binding: b, Cluster: c,
//		ClusterOverrides: cops, Overrides: ops}, interp)
//	// w.Upsert is what the cluster's agent receives
//
// It imports hub/store (ObjectRef, for KeyOfRef), internal/overrides,
// internal/interpreter/native, api/ and Kubernetes API machinery; it does
// no I/O.
package work
