package interpreter

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// Customization is a ResourceInterpreterCustomization
// (configv1alpha1.ResourceInterpreterCustomization), reduced to what the
// interpreter reads and with one rule type for every operation, so that a
// caller can write one as a literal. It has the API type's JSON shape: it is
// decoded through the API type (DecodeCustomizations) and converted back to
// it for the API's rules (apiObject).
type Customization struct {
	APIVersion string                `json:"apiVersion,omitempty"`
	Kind       string                `json:"kind,omitempty"`
	Metadata   CustomizationMetadata `json:"metadata"`
	Spec       CustomizationSpec     `json:"spec"`
}

// CustomizationMetadata is the part of a RIC's metadata that matters.
type CustomizationMetadata struct {
	Name string `json:"name"`
}

// CustomizationSpec is a RIC's spec.
type CustomizationSpec struct {
	Target         CustomizationTarget `json:"target"`
	Customizations CustomizationRules  `json:"customizations"`
}

// CustomizationTarget is the exact apiVersion and kind a RIC applies to.
type CustomizationTarget struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// GVK is the target's GroupVersionKind.
func (t CustomizationTarget) GVK() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(t.APIVersion, t.Kind)
}

// CustomizationRules holds one optional Lua script per operation.
type CustomizationRules struct {
	Retention                *LuaRule `json:"retention,omitempty"`
	ReplicaResource          *LuaRule `json:"replicaResource,omitempty"`
	ComponentResource        *LuaRule `json:"componentResource,omitempty"`
	ReplicaRevision          *LuaRule `json:"replicaRevision,omitempty"`
	StatusReflection         *LuaRule `json:"statusReflection,omitempty"`
	StatusAggregation        *LuaRule `json:"statusAggregation,omitempty"`
	HealthInterpretation     *LuaRule `json:"healthInterpretation,omitempty"`
	DependencyInterpretation *LuaRule `json:"dependencyInterpretation,omitempty"`
}

// LuaRule is one customization block.
type LuaRule struct {
	LuaScript string `json:"luaScript"`
}

// scriptOp ties an operation to its RIC block and the global function its
// script must define.
type scriptOp struct {
	op    configv1alpha1.InterpreterOperation
	fn    string
	field func(*CustomizationRules) *LuaRule
}

// scriptOps lists the Lua-customizable operations.
var scriptOps = []scriptOp{
	{configv1alpha1.InterpreterOperationRetain, "Retain", func(r *CustomizationRules) *LuaRule { return r.Retention }},
	{configv1alpha1.InterpreterOperationInterpretReplica, "GetReplicas", func(r *CustomizationRules) *LuaRule { return r.ReplicaResource }},
	{configv1alpha1.InterpreterOperationInterpretComponent, "GetComponents", func(r *CustomizationRules) *LuaRule { return r.ComponentResource }},
	{configv1alpha1.InterpreterOperationReviseReplica, "ReviseReplica", func(r *CustomizationRules) *LuaRule { return r.ReplicaRevision }},
	{configv1alpha1.InterpreterOperationInterpretStatus, "ReflectStatus", func(r *CustomizationRules) *LuaRule { return r.StatusReflection }},
	{configv1alpha1.InterpreterOperationAggregateStatus, "AggregateStatus", func(r *CustomizationRules) *LuaRule { return r.StatusAggregation }},
	{configv1alpha1.InterpreterOperationInterpretHealth, "InterpretHealth", func(r *CustomizationRules) *LuaRule { return r.HealthInterpretation }},
	{configv1alpha1.InterpreterOperationInterpretDependency, "GetDependencies", func(r *CustomizationRules) *LuaRule { return r.DependencyInterpretation }},
}

func script(r *LuaRule) string {
	if r == nil {
		return ""
	}
	return r.LuaScript
}

// DecodeCustomizations decodes every ResourceInterpreterCustomization of
// data (YAML or JSON, several documents allowed; documents that are empty or
// only comments are skipped) through api/codec: strictly, with errors naming
// the document and the field path, in Tether's or Karmada's config group.
// Any other kind is an error.
func DecodeCustomizations(data []byte) ([]Customization, error) {
	docs, err := codec.Split(data)
	if err != nil {
		return nil, fmt.Errorf("decode customization: %w", err)
	}
	out := make([]Customization, 0, len(docs))
	for i := range docs {
		obj, err := codec.DecodeDocument(&docs[i])
		if err != nil {
			return nil, fmt.Errorf("decode customization: %w", err)
		}
		if _, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization); !ok {
			return nil, fmt.Errorf("decode customization: document %d is a %s, not a %s",
				docs[i].Index, docs[i].Kind, configv1alpha1.KindResourceInterpreterCustomization)
		}
		// The strict decode above checked the document; the reduced form
		// reads the same JSON.
		var c Customization
		if err := json.Unmarshal(docs[i].JSON, &c); err != nil {
			return nil, fmt.Errorf("decode customization: document %d: %w", docs[i].Index, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// apiObject converts c to the API type it has the JSON shape of.
func (c *Customization) apiObject() (*configv1alpha1.ResourceInterpreterCustomization, error) {
	js, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("customization %s: %w", c.Metadata.Name, err)
	}
	out := &configv1alpha1.ResourceInterpreterCustomization{}
	if err := json.Unmarshal(js, out); err != nil {
		return nil, fmt.Errorf("customization %s: %w", c.Metadata.Name, err)
	}
	return out, nil
}

// rules are the merged scripts of every RIC of one target (Karmada's
// configmanager accessor): sorted by RIC name, the first non-empty script
// of each single-script operation wins, and all non-empty dependency
// scripts run.
type rules struct {
	scripts      map[configv1alpha1.InterpreterOperation]string
	dependencies []string
}

func (r *rules) script(op configv1alpha1.InterpreterOperation) string {
	if r == nil {
		return ""
	}
	return r.scripts[op]
}

// mergeCustomizations groups RICs by target and merges each group.
func mergeCustomizations(cs []Customization) map[schema.GroupVersionKind]*rules {
	sorted := append([]Customization(nil), cs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Metadata.Name < sorted[j].Metadata.Name })
	out := make(map[schema.GroupVersionKind]*rules)
	for _, c := range sorted {
		gvk := c.Spec.Target.GVK()
		r := out[gvk]
		if r == nil {
			r = &rules{scripts: map[configv1alpha1.InterpreterOperation]string{}}
			out[gvk] = r
		}
		for _, so := range scriptOps {
			s := script(so.field(&c.Spec.Customizations))
			if s == "" {
				continue
			}
			if so.op == configv1alpha1.InterpreterOperationInterpretDependency {
				r.dependencies = append(r.dependencies, s)
				continue
			}
			if r.scripts[so.op] == "" {
				r.scripts[so.op] = s
			}
		}
	}
	return out
}
