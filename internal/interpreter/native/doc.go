// Package native is the built-in resource interpreter for Kubernetes kinds:
// Go handlers that reproduce Karmada v1.18.2's default (native) interpreter
// for Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs,
// Pods, Services, Ingresses, ServiceAccounts, Secrets, PersistentVolumes,
// PersistentVolumeClaims, PodDisruptionBudgets, HorizontalPodAutoscalers and
// ServiceImports (interpreter-spec.md §8).
//
// Interpreter has Karmada's ResourceInterpreter method set, so the facade in
// package interpreter can chain it after the Lua and webhook interpreters:
//
//	ipt := native.New()
//	if ipt.HookEnabled(obj.GroupVersionKind(), configv1alpha1.InterpreterOperationInterpretReplica) {
//		replicas, requires, err := ipt.GetReplicas(obj)
//		...
//	}
//
// HookEnabled is true for InterpretStatus on every GVK (the whole-.status
// fallback) and for the other operations only for the kinds that have a
// handler. Calling an operation without a handler returns Karmada's
// "default <op> interpreter for <gvk> not found" error.
//
// Handlers work on typed objects where Karmada does (a typed round trip drops
// unknown fields and writes zero values), and on the unstructured content
// where Karmada does, so results are byte-for-byte Karmada's. Some handlers
// modify the object they are given, as Karmada's do; callers that need the
// input afterwards pass a copy.
//
// ReplicaRequirements and PodDependencies are exported for the Lua kube
// helpers (kube.accuratePodRequirements, kube.getPodDependencies), which use
// the same rules.
package native
