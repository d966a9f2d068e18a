package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// Results are an operation's results keyed by Karmada's RuleResult names
// (pkg/util/interpreter/rule.go). Values are JSON-shaped: nil, bool, string,
// numbers (int64, float64, json.Number or any Go integer), []any and
// map[string]any. Object results (revised, retained, aggregatedStatus) must
// keep unstructured's int64/float64 distinction, which is how Compare finds
// their float paths; use the constructors below.
type Results map[string]any

// Result keys, as Karmada names them.
const (
	KeyReplica          = "replica"
	KeyRequires         = "requires"
	KeyComponents       = "components"
	KeyRevised          = "revised"
	KeyRetained         = "retained"
	KeyStatus           = "status"
	KeyAggregatedStatus = "aggregatedStatus"
	KeyHealthy          = "healthy"
	KeyDependencies     = "dependencies"
)

// objectKeys are the result keys holding unstructured objects, the only ones
// with floatPaths.
var objectKeys = []string{KeyRevised, KeyRetained, KeyAggregatedStatus}

// ReplicaResults is the result of InterpretReplica. A nil requires is JSON null.
func ReplicaResults(replica int32, requires *configv1alpha1.ReplicaRequirements) (Results, error) {
	req, err := jsonValue(requires)
	if err != nil {
		return nil, fmt.Errorf("conformance: requires: %w", err)
	}
	return Results{KeyReplica: int64(replica), KeyRequires: req}, nil
}

// ComponentResults is the result of InterpretComponent; a nil list is null.
func ComponentResults(components []configv1alpha1.Component) (Results, error) {
	v, err := jsonValue(components)
	if err != nil {
		return nil, fmt.Errorf("conformance: components: %w", err)
	}
	return Results{KeyComponents: v}, nil
}

// DependencyResults is the result of InterpretDependency; a nil list is null.
func DependencyResults(deps []configv1alpha1.DependentObjectReference) (Results, error) {
	v, err := jsonValue(deps)
	if err != nil {
		return nil, fmt.Errorf("conformance: dependencies: %w", err)
	}
	return Results{KeyDependencies: v}, nil
}

// RevisedResults is the result of ReviseReplica.
func RevisedResults(obj *unstructured.Unstructured) Results {
	return Results{KeyRevised: objectValue(obj)}
}

// RetainedResults is the result of Retain.
func RetainedResults(obj *unstructured.Unstructured) Results {
	return Results{KeyRetained: objectValue(obj)}
}

// AggregatedStatusResults is the result of AggregateStatus.
func AggregatedStatusResults(obj *unstructured.Unstructured) Results {
	return Results{KeyAggregatedStatus: objectValue(obj)}
}

// StatusResults is the result of InterpretStatus: the RawExtension's JSON,
// or null when it is nil or empty.
func StatusResults(status *runtime.RawExtension) (Results, error) {
	if status == nil || len(bytes.TrimSpace(status.Raw)) == 0 {
		return Results{KeyStatus: nil}, nil
	}
	v, err := decodeJSON(status.Raw)
	if err != nil {
		return nil, fmt.Errorf("conformance: status: %w", err)
	}
	return Results{KeyStatus: v}, nil
}

// HealthResults is the result of InterpretHealth.
func HealthResults(healthy bool) Results {
	return Results{KeyHealthy: healthy}
}

// objectValue deep-copies an object's content, keeping int64 and float64.
func objectValue(obj *unstructured.Unstructured) any {
	if obj == nil {
		return nil
	}
	return copyValue(obj.Object)
}

// copyValue copies maps and slices recursively; other values are shared.
// Unlike runtime.DeepCopyJSONValue it does not panic on non-JSON types, so a
// wrong type shows up as a comparison failure.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = copyValue(e)
		}
		return m
	case []any:
		if v == nil {
			return v // a nil list is JSON null, as in Karmada's output
		}
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = copyValue(e)
		}
		return l
	default:
		return v
	}
}

// jsonValue is v's encoding/json form decoded back with UseNumber.
func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(raw)
}

// decodeJSON decodes one JSON value, numbers as json.Number.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
