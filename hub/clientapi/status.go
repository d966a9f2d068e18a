package clientapi

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
)

// withStatus merges a template's binding status into the template with
// fold.MergeInto, the one implementation of it: the aggregator folds
// the per-cluster items with the interpreter's AggregateStatus when they
// change and records the template's .status on the binding, and a read only
// copies it. The template as stored never holds a status. A binding
// without an aggregated status (a kind without an AggregateStatus hook, or
// nothing reported yet) leaves the template as stored; an unreadable one
// is logged and leaves it too.
func (b *backend) withStatus(obj map[string]any, binding []byte) map[string]any {
	var rb workv1alpha1.ResourceBinding
	if err := json.Unmarshal(binding, &rb); err != nil {
		b.log.Warn("decode binding on read", "error", err)
		return obj
	}
	if _, ok := fold.TemplateStatus(&rb); !ok {
		return obj
	}
	u := &unstructured.Unstructured{Object: obj}
	if err := fold.MergeInto(u, &rb); err != nil {
		b.log.Warn("merge status on read", "namespace", rb.Namespace, "binding", rb.Name, "error", err)
		return obj
	}
	return u.Object
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

// withRollout sets the condition of a template's rollout
// (rollout.Condition) in its .status.conditions, in place of an earlier
// one of that type: the template's status says where its rollout is and
// why it paused, as RolloutService does. An unreadable record is logged
// and leaves the template as it is.
func (b *backend) withRollout(obj map[string]any, record []byte) map[string]any {
	rec, err := rollout.DecodeRecord(record)
	if err != nil {
		b.log.Warn("decode rollout record on read", "error", err)
		return obj
	}
	status, _ := obj["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	conds, _ := status["conditions"].([]any)
	out := make([]any, 0, len(conds)+1)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == rollout.ConditionType {
			continue
		}
		out = append(out, c)
	}
	status["conditions"] = append(out, rollout.Condition(rec))
	obj["status"] = status
	return obj
}
