package work

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/internal/overrides"
)

// Interpreter is what rendering needs of the resource interpreter; the
// facade in internal/interpreter satisfies it. ReviseReplica takes a
// context because a webhook may answer it.
type Interpreter interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replica int64) (*unstructured.Unstructured, error)
}

// Input is everything one cluster's work of one template depends on.
type Input struct {
	// Template is the resource template as the user applied it. Render
	// never modifies it.
	Template *unstructured.Unstructured
	// Binding is the template's binding: its scheduling result
	// (spec.clusters, spec.requiredBy), placement and deletion and conflict
	// settings. Its metadata.uid is the binding's permanent ID.
	Binding *workv1alpha1.ResourceBinding
	// Cluster is the target cluster; override rules select on its name,
	// labels and fields.
	Cluster *clusterv1alpha1.Cluster
	// ClusterOverrides and Overrides are the candidate override policies;
	// Render applies those that select Template (overrides.Apply).
	ClusterOverrides []policyv1alpha1.ClusterOverridePolicy
	Overrides        []policyv1alpha1.OverridePolicy
}

// Work is one template's work for one cluster.
type Work struct {
	// Upsert is the wire form the agent receives: key, version, manifests,
	// apply options and binding reference.
	Upsert *agentv1.WorkUpsert
	// AppliedOverrides are Karmada's applied-overrides records
	// (policy.karmada.io/applied-overrides and
	// policy.karmada.io/applied-cluster-overrides), for placement queries.
	// They are not part of the manifests, so they do not change the version.
	AppliedOverrides map[string]string
}

// Render computes the work of in.Template for in.Cluster. It is a pure
// function of its input (plus whatever the interpreter's customizations
// compute), in Karmada's order (binding controller, ensureWork):
//
//  1. deep-copy the template;
//  2. Divided scheduling of a workload with replicas: ReviseReplica to the
//     cluster's share, when the interpreter has the hook (Duplicated keeps
//     the template's replicas; kinds without the hook pass through);
//  3. apply ClusterOverridePolicies, then the OverridePolicies of the
//     template's namespace (internal/overrides);
//  4. prune what must not reach a member (Prune);
//  5. label and annotate the object with its binding (ownership).
//
// The apply options are ApplyOptions: the strategy of the template's
// apply.tether.io/strategy annotation, the binding's conflict resolution
// and deletion policy.
//
// The version is the hex SHA-256 of the canonical JSON of the manifests,
// apply options and binding reference, so identical content has the same
// version on every cluster.
func Render(ctx context.Context, in Input, interp Interpreter) (*Work, error) {
	if in.Template == nil || in.Binding == nil || in.Cluster == nil {
		return nil, fmt.Errorf("render: template, binding and cluster are required")
	}
	key := KeyOf(in.Template)
	obj := in.Template.DeepCopy()
	obj, err := revise(ctx, obj, in.Binding, in.Cluster.Name, interp)
	if err != nil {
		return nil, fmt.Errorf("render %s for cluster %s: %w", key, in.Cluster.Name, err)
	}
	res, err := overrides.Apply(obj, in.Cluster, in.ClusterOverrides, in.Overrides)
	if err != nil {
		return nil, fmt.Errorf("render %s for cluster %s: %w", key, in.Cluster.Name, err)
	}
	applied, err := res.Annotations()
	if err != nil {
		return nil, fmt.Errorf("render %s for cluster %s: %w", key, in.Cluster.Name, err)
	}
	obj = res.Object
	Prune(obj)
	setOwnership(obj, in.Binding, key)
	setTemplateGeneration(obj, in.Template.GetGeneration())
	opts, err := ApplyOptions(in.Template, in.Binding)
	if err != nil {
		return nil, fmt.Errorf("render %s for cluster %s: %w", key, in.Cluster.Name, err)
	}
	up, err := seal(key, obj, opts, bindingRef(in.Binding))
	if err != nil {
		return nil, fmt.Errorf("render %s for cluster %s: %w", key, in.Cluster.Name, err)
	}
	return &Work{Upsert: up, AppliedOverrides: applied}, nil
}

// revise sets obj's replicas to the cluster's share when the binding
// divides replicas and the interpreter can revise obj's kind.
func revise(ctx context.Context, obj *unstructured.Unstructured, b *workv1alpha1.ResourceBinding, cluster string, interp Interpreter) (*unstructured.Unstructured, error) {
	if !Divided(b) {
		return obj, nil
	}
	if interp == nil || !interp.HookEnabled(obj.GroupVersionKind(), configv1alpha1.InterpreterOperationReviseReplica) {
		return obj, nil
	}
	replicas, ok := ReplicasFor(b, cluster)
	if !ok {
		return obj, nil
	}
	out, err := interp.ReviseReplica(ctx, obj, int64(replicas))
	if err != nil {
		return nil, fmt.Errorf("revise replicas to %d: %w", replicas, err)
	}
	return out, nil
}

// Divided reports whether the binding divides the template's replicas
// among its clusters (Karmada's needReviseReplicas: replicas > 0 and a
// Divided placement).
func Divided(b *workv1alpha1.ResourceBinding) bool {
	p := b.Spec.Placement
	return b.Spec.Replicas > 0 && p != nil && p.ReplicaSchedulingType() == policyv1alpha1.ReplicaSchedulingTypeDivided
}

// DeletionPolicy is what happens to the binding's objects when a work is
// removed: ORPHAN when the binding preserves resources on deletion, DELETE
// otherwise.
func DeletionPolicy(b *workv1alpha1.ResourceBinding) agentv1.DeletionPolicy {
	if b.Spec.PreserveResourcesOnDeletion != nil && *b.Spec.PreserveResourcesOnDeletion {
		return agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN
	}
	return agentv1.DeletionPolicy_DELETION_POLICY_DELETE
}

func bindingRef(b *workv1alpha1.ResourceBinding) *agentv1.BindingReference {
	return &agentv1.BindingReference{Namespace: b.Namespace, Name: b.Name, Uid: string(b.UID)}
}
