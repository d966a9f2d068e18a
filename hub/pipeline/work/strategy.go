package work

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// AnnotationApplyStrategy on a resource template chooses how the agents
// write its objects in the members: one of StrategyNames, ServerSideApply
// when absent. Karmada v1.18 has no per-resource strategy (only
// conflictResolution); the four values are OCM ManifestWork's
// updateStrategy types.
const AnnotationApplyStrategy = "apply.tether.io/strategy"

type namedStrategy struct {
	name     string
	strategy agentv1.ApplyStrategy
}

// strategyNames are the annotation's values, in documentation order.
var strategyNames = []namedStrategy{
	{"ServerSideApply", agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY},
	{"Update", agentv1.ApplyStrategy_APPLY_STRATEGY_UPDATE},
	{"CreateOnly", agentv1.ApplyStrategy_APPLY_STRATEGY_CREATE_ONLY},
	{"ReadOnly", agentv1.ApplyStrategy_APPLY_STRATEGY_READ_ONLY},
}

// StrategyNames are the values AnnotationApplyStrategy accepts.
func StrategyNames() []string {
	out := make([]string, 0, len(strategyNames))
	for _, s := range strategyNames {
		out = append(out, s.name)
	}
	return out
}

// StrategyName is the annotation value of s ("ServerSideApply" for
// UNSPECIFIED, as the agent reads it).
func StrategyName(s agentv1.ApplyStrategy) string {
	for _, n := range strategyNames {
		if n.strategy == s {
			return n.name
		}
	}
	return strategyNames[0].name
}

// ApplyStrategyOf is the strategy the template's AnnotationApplyStrategy
// chooses: ServerSideApply when absent, an error naming the annotation and
// the allowed values when unknown. The hub's Apply refuses such a template
// with this error; Render fails on it (a template stored before that check
// keeps what its clusters have).
func ApplyStrategyOf(template *unstructured.Unstructured) (agentv1.ApplyStrategy, error) {
	v, ok := template.GetAnnotations()[AnnotationApplyStrategy]
	if !ok {
		return agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY, nil
	}
	if i := slices.IndexFunc(strategyNames, func(n namedStrategy) bool { return n.name == v }); i >= 0 {
		return strategyNames[i].strategy, nil
	}
	return 0, fmt.Errorf("annotation %s: unsupported value %q: supported values: %s",
		AnnotationApplyStrategy, v, strings.Join(StrategyNames(), ", "))
}

// ApplyOptions are a work's apply options: the strategy from the
// template's annotation (ApplyStrategyOf), the conflict resolution from
// the binding (its policy's conflictResolution, Abort by default) and the
// deletion policy (DeletionPolicy). Render and the hub's Simulate both use
// it.
func ApplyOptions(template *unstructured.Unstructured, b *workv1alpha1.ResourceBinding) (*agentv1.ApplyOptions, error) {
	strategy, err := ApplyStrategyOf(template)
	if err != nil {
		return nil, err
	}
	o := &agentv1.ApplyOptions{
		Strategy:           strategy,
		ConflictResolution: agentv1.ConflictResolution_CONFLICT_RESOLUTION_ABORT,
		DeletionPolicy:     DeletionPolicy(b),
	}
	if b.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
		o.ConflictResolution = agentv1.ConflictResolution_CONFLICT_RESOLUTION_OVERWRITE
	}
	return o, nil
}

// ConflictResolutionName is Karmada's spelling of c: Overwrite or Abort.
func ConflictResolutionName(c agentv1.ConflictResolution) string {
	if c == agentv1.ConflictResolution_CONFLICT_RESOLUTION_OVERWRITE {
		return string(policyv1alpha1.ConflictOverwrite)
	}
	return string(policyv1alpha1.ConflictAbort)
}
