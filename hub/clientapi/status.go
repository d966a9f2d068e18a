package clientapi

import (
	"context"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// withStatus merges a template's binding status into the template: the
// aggregator keeps one status item per target cluster in the binding's
// status.aggregatedStatus, and reads fold them into the template's .status
// with the interpreter's AggregateStatus (Lua customization, webhook,
// built-in or native rules, as Karmada's aggregator does). The template as
// stored never holds a status, so a read always reflects the latest
// reports. Kinds without an AggregateStatus hook, bindings without items
// and interpreter errors (logged) leave the template without status.
func (b *backend) withStatus(ctx context.Context, obj map[string]any, binding []byte) map[string]any {
	var rb workv1alpha1.ResourceBinding
	if err := json.Unmarshal(binding, &rb); err != nil || len(rb.Status.AggregatedStatus) == 0 {
		return obj
	}
	u, err := toUnstructured(obj)
	if err != nil {
		return obj
	}
	if !b.interp.HookEnabled(u.GroupVersionKind(), configv1alpha1.InterpreterOperationAggregateStatus) {
		return obj
	}
	out, err := b.interp.AggregateStatus(ctx, u, rb.Status.AggregatedStatus)
	if err != nil {
		b.log.Warn("aggregate status on read", "kind", u.GetKind(), "namespace", u.GetNamespace(), "name", u.GetName(), "error", err)
		return obj
	}
	st, ok := out.Object["status"]
	if !ok {
		return obj
	}
	js, err := json.Marshal(st)
	if err != nil {
		return obj
	}
	if v, err := decodeJSON(js); err == nil {
		obj["status"] = v
	}
	return obj
}

// toUnstructured converts a decoded JSON object (json.Number values) to an
// unstructured object (int64 and float64 values).
func toUnstructured(obj map[string]any) (*unstructured.Unstructured, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, err
	}
	return u, nil
}
