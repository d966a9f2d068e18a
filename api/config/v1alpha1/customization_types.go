package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ResourceInterpreterCustomization holds Lua scripts that interpret one kind
// of object (its replicas, status, health, dependencies ...). It is
// cluster-scoped and takes precedence over webhooks and built-in rules.
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the target kind and its scripts.
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationList is a list of
// ResourceInterpreterCustomization.
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceInterpreterCustomization `json:"items"`
}

// ResourceInterpreterCustomizationSpec is the target kind and its scripts.
type ResourceInterpreterCustomizationSpec struct {
	// Target is the kind the scripts apply to, matched exactly.
	Target CustomizationTarget `json:"target"`

	// Customizations are the scripts, one per operation; at least one.
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget is an apiVersion and kind, without wildcards.
type CustomizationTarget struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// CustomizationRules holds the script of each operation; each is optional.
type CustomizationRules struct {
	// Retention: function Retain(desiredObj, observedObj).
	Retention *LocalValueRetention `json:"retention,omitempty"`
	// ReplicaResource: function GetReplicas(desiredObj).
	ReplicaResource *ReplicaResourceRequirement `json:"replicaResource,omitempty"`
	// ComponentResource: function GetComponents(desiredObj).
	ComponentResource *ComponentResourceRequirement `json:"componentResource,omitempty"`
	// ReplicaRevision: function ReviseReplica(desiredObj, desiredReplica).
	ReplicaRevision *ReplicaRevision `json:"replicaRevision,omitempty"`
	// StatusReflection: function ReflectStatus(observedObj).
	StatusReflection *StatusReflection `json:"statusReflection,omitempty"`
	// StatusAggregation: function AggregateStatus(desiredObj, statusItems).
	StatusAggregation *StatusAggregation `json:"statusAggregation,omitempty"`
	// HealthInterpretation: function InterpretHealth(observedObj).
	HealthInterpretation *HealthInterpretation `json:"healthInterpretation,omitempty"`
	// DependencyInterpretation: function GetDependencies(desiredObj).
	DependencyInterpretation *DependencyInterpretation `json:"dependencyInterpretation,omitempty"`
}

// LocalValueRetention holds the Retain script.
type LocalValueRetention struct {
	LuaScript string `json:"luaScript"`
}

// ReplicaResourceRequirement holds the GetReplicas script.
type ReplicaResourceRequirement struct {
	LuaScript string `json:"luaScript"`
}

// ComponentResourceRequirement holds the GetComponents script.
type ComponentResourceRequirement struct {
	LuaScript string `json:"luaScript"`
}

// ReplicaRevision holds the ReviseReplica script.
type ReplicaRevision struct {
	LuaScript string `json:"luaScript"`
}

// StatusReflection holds the ReflectStatus script.
type StatusReflection struct {
	LuaScript string `json:"luaScript"`
}

// StatusAggregation holds the AggregateStatus script.
type StatusAggregation struct {
	LuaScript string `json:"luaScript"`
}

// HealthInterpretation holds the InterpretHealth script.
type HealthInterpretation struct {
	LuaScript string `json:"luaScript"`
}

// DependencyInterpretation holds the GetDependencies script.
type DependencyInterpretation struct {
	LuaScript string `json:"luaScript"`
}

// customizationField ties an operation to its field of CustomizationRules.
type customizationField struct {
	op     InterpreterOperation
	name   string // JSON name of the field
	script func(*CustomizationRules) (string, bool)
}

// customizationFields lists the operations in the order of CustomizationRules.
var customizationFields = []customizationField{
	{InterpreterOperationRetain, "retention", func(r *CustomizationRules) (string, bool) {
		return scriptOf(r.Retention, func(v *LocalValueRetention) string { return v.LuaScript })
	}},
	{InterpreterOperationInterpretReplica, "replicaResource", func(r *CustomizationRules) (string, bool) {
		return scriptOf(r.ReplicaResource, func(v *ReplicaResourceRequirement) string { return v.LuaScript })
	}},
	{InterpreterOperationInterpretComponent, "componentResource", func(r *CustomizationRules) (string, bool) {
		return scriptOf(r.ComponentResource, func(v *ComponentResourceRequirement) string { return v.LuaScript })
	}},
	{InterpreterOperationReviseReplica, "replicaRevision", func(r *CustomizationRules) (string, bool) {
		return scriptOf(r.ReplicaRevision, func(v *ReplicaRevision) string { return v.LuaScript })
	}},
	{InterpreterOperationInterpretStatus, "statusReflection", func(r *CustomizationRules) (string, bool) {
		return scriptOf(r.StatusReflection, func(v *StatusReflection) string { return v.LuaScript })
	}},
	{InterpreterOperationAggregateStatus, "statusAggregation", func(r *CustomizationRules) (string, bool) {
		return scriptOf(r.StatusAggregation, func(v *StatusAggregation) string { return v.LuaScript })
	}},
	{InterpreterOperationInterpretHealth, "healthInterpretation", func(r *CustomizationRules) (string, bool) {
		return scriptOf(r.HealthInterpretation, func(v *HealthInterpretation) string { return v.LuaScript })
	}},
	{InterpreterOperationInterpretDependency, "dependencyInterpretation", func(r *CustomizationRules) (string, bool) {
		return scriptOf(r.DependencyInterpretation, func(v *DependencyInterpretation) string { return v.LuaScript })
	}},
}

func scriptOf[T any](v *T, get func(*T) string) (string, bool) {
	if v == nil {
		return "", false
	}
	return get(v), true
}

// Script returns the Lua script for op and whether its block is set.
func (r *CustomizationRules) Script(op InterpreterOperation) (string, bool) {
	for _, f := range customizationFields {
		if f.op == op {
			return f.script(r)
		}
	}
	return "", false
}

// Operations returns the operations whose block is set, in field order.
func (r *CustomizationRules) Operations() []InterpreterOperation {
	var ops []InterpreterOperation
	for _, f := range customizationFields {
		if _, ok := f.script(r); ok {
			ops = append(ops, f.op)
		}
	}
	return ops
}
