package interpreter

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// luaFunctions is the global function each operation's script must define.
var luaFunctions = map[configv1alpha1.InterpreterOperation]string{
	configv1alpha1.InterpreterOperationRetain:              "Retain",
	configv1alpha1.InterpreterOperationInterpretReplica:    "GetReplicas",
	configv1alpha1.InterpreterOperationInterpretComponent:  "GetComponents",
	configv1alpha1.InterpreterOperationReviseReplica:       "ReviseReplica",
	configv1alpha1.InterpreterOperationInterpretStatus:     "ReflectStatus",
	configv1alpha1.InterpreterOperationAggregateStatus:     "AggregateStatus",
	configv1alpha1.InterpreterOperationInterpretHealth:     "InterpretHealth",
	configv1alpha1.InterpreterOperationInterpretDependency: "GetDependencies",
}

// DecodeCustomizations decodes every ResourceInterpreterCustomization of
// data (YAML or JSON, several documents allowed; documents that are empty or
// only comments are skipped) through api/codec: strictly, with errors naming
// the document and the field path, in Tether's or Karmada's config group.
// Any other kind is an error.
func DecodeCustomizations(data []byte) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	docs, err := codec.Split(data)
	if err != nil {
		return nil, fmt.Errorf("decode customization: %w", err)
	}
	out := make([]configv1alpha1.ResourceInterpreterCustomization, 0, len(docs))
	for i := range docs {
		obj, err := codec.DecodeDocument(&docs[i])
		if err != nil {
			return nil, fmt.Errorf("decode customization: %w", err)
		}
		c, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization)
		if !ok {
			return nil, fmt.Errorf("decode customization: document %d is a %s, not a %s",
				docs[i].Index, docs[i].Kind, configv1alpha1.KindResourceInterpreterCustomization)
		}
		out = append(out, *c)
	}
	return out, nil
}

// targetGVK is the exact GroupVersionKind c applies to.
func targetGVK(c *configv1alpha1.ResourceInterpreterCustomization) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind)
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
func mergeCustomizations(cs []configv1alpha1.ResourceInterpreterCustomization) map[schema.GroupVersionKind]*rules {
	sorted := append([]configv1alpha1.ResourceInterpreterCustomization(nil), cs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	out := make(map[schema.GroupVersionKind]*rules)
	for i := range sorted {
		c := &sorted[i]
		gvk := targetGVK(c)
		r := out[gvk]
		if r == nil {
			r = &rules{scripts: map[configv1alpha1.InterpreterOperation]string{}}
			out[gvk] = r
		}
		for _, op := range c.Spec.Customizations.Operations() {
			s, _ := c.Spec.Customizations.Script(op)
			if s == "" {
				continue
			}
			if op == configv1alpha1.InterpreterOperationInterpretDependency {
				r.dependencies = append(r.dependencies, s)
				continue
			}
			if r.scripts[op] == "" {
				r.scripts[op] = s
			}
		}
	}
	return out
}
