package overrides

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// Annotation keys under which Karmada records the applied rules on a Work.
const (
	AnnotationAppliedOverrides        = "policy.karmada.io/applied-overrides"
	AnnotationAppliedClusterOverrides = "policy.karmada.io/applied-cluster-overrides"
)

// Annotations returns the applied-overrides records: for each kind with at
// least one applied rule, a JSON list of {policyName, overriders} sorted by
// policy name (not application order), as Karmada writes them.
func (r *Result) Annotations() (map[string]string, error) {
	out := map[string]string{}
	for key, applied := range map[string][]Applied{
		AnnotationAppliedClusterOverrides: r.ClusterOverrides,
		AnnotationAppliedOverrides:        r.Overrides,
	} {
		if len(applied) == 0 {
			continue
		}
		b, err := json.Marshal(SortedByName(applied))
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", key, err)
		}
		out[key] = string(b)
	}
	return out, nil
}

// SortedByName returns a copy of applied sorted by policy name, keeping
// the application order of rules of one policy.
func SortedByName(applied []Applied) []Applied {
	out := slices.Clone(applied)
	slices.SortStableFunc(out, func(a, b Applied) int { return cmp.Compare(a.PolicyName, b.PolicyName) })
	return out
}
