package fold

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// Where the aggregator (hub/aggregate) records what api/work/v1alpha1 has
// no field for.
const (
	// AnnotationTemplateStatus holds the JSON of the template's aggregated
	// .status: what AggregateStatus(template, items) returned. The client
	// API shows it as the template's .status (MergeInto). Absent when the
	// kind has no AggregateStatus hook.
	AnnotationTemplateStatus = "status.tether.io/template-status"
	// AnnotationStaleClusters holds the JSON list of the clusters whose
	// items are stale (lease Unknown): health Unknown, no status, counted
	// nowhere in the template status. Absent when none is.
	AnnotationStaleClusters = "status.tether.io/stale-clusters"
	// AnnotationStatusTruncated says, when present, that the binding's
	// aggregated status was larger than the aggregator writes and which
	// per-cluster details it left out to stay under etcd's request limit.
	AnnotationStatusTruncated = "status.tether.io/status-truncated"
)

// TemplateStatus returns the template's aggregated .status as JSON; ok is
// false when the binding holds none.
func TemplateStatus(b *workv1alpha1.ResourceBinding) (status json.RawMessage, ok bool) {
	raw, ok := b.Annotations[AnnotationTemplateStatus]
	if !ok {
		return nil, false
	}
	return json.RawMessage(raw), true
}

// StaleClusters returns the clusters whose items are stale, sorted.
func StaleClusters(b *workv1alpha1.ResourceBinding) []string {
	var out []string
	if raw, ok := b.Annotations[AnnotationStaleClusters]; ok {
		_ = json.Unmarshal([]byte(raw), &out) // only the aggregator writes it
	}
	return out
}

// MergeInto sets obj's .status to the binding's aggregated template status
// (leaving obj alone when the binding holds none): what the client API
// does on Get of a template.
func MergeInto(obj *unstructured.Unstructured, b *workv1alpha1.ResourceBinding) error {
	raw, ok := TemplateStatus(b)
	if !ok {
		return nil
	}
	var status map[string]any
	if err := utiljson.Unmarshal(raw, &status); err != nil { // integers as int64, as unstructured wants
		return fmt.Errorf("annotation %s of binding %s/%s: %w", AnnotationTemplateStatus, b.Namespace, b.Name, err)
	}
	if status == nil {
		unstructured.RemoveNestedField(obj.Object, "status")
		return nil
	}
	obj.Object["status"] = status
	return nil
}

// Interpreter is what folding needs of the resource interpreter; the
// facade in internal/interpreter satisfies it.
type Interpreter interface {
	AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error)
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
}

// Template runs AggregateStatus on the template, whose .status is
// first set to the previous aggregated status (Karmada aggregates onto the
// template's current status), and returns the resulting .status as JSON;
// nil when the kind has no AggregateStatus hook or the result has no status.
func Template(ctx context.Context, interp Interpreter, template *unstructured.Unstructured, prev json.RawMessage, items []configv1alpha1.AggregatedStatusItem) (json.RawMessage, error) {
	if !interp.HookEnabled(template.GroupVersionKind(), configv1alpha1.InterpreterOperationAggregateStatus) {
		return nil, nil
	}
	obj := template.DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "status")
	var prevStatus map[string]any
	if len(prev) > 0 && utiljson.Unmarshal(prev, &prevStatus) == nil && prevStatus != nil {
		obj.Object["status"] = prevStatus
	}
	out, err := interp.AggregateStatus(ctx, obj, items)
	if err != nil {
		return nil, fmt.Errorf("aggregate status of %s %s/%s: %w", template.GetKind(), template.GetNamespace(), template.GetName(), err)
	}
	status, ok := out.Object["status"].(map[string]any)
	if !ok {
		return nil, nil
	}
	keepConditionTimes(status, prevStatus)
	data, err := json.Marshal(status)
	if err != nil {
		return nil, fmt.Errorf("encode status of %s %s/%s: %w", template.GetKind(), template.GetNamespace(), template.GetName(), err)
	}
	return data, nil
}

// conditionTimes are the condition fields that only say when.
var conditionTimes = []string{"lastTransitionTime", "lastProbeTime", "lastUpdateTime", "lastHeartbeatTime"}

// keepConditionTimes copies the times of an unchanged condition (same
// type, status, reason and message) from prev, so that aggregations that
// stamp conditions with "now" (Job) do not write on every pass.
func keepConditionTimes(status, prev map[string]any) {
	cur, _ := status["conditions"].([]any)
	old, _ := prev["conditions"].([]any)
	for _, c := range cur {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for _, o := range old {
			om, ok := o.(map[string]any)
			if !ok || !sameCondition(cm, om) {
				continue
			}
			for _, f := range conditionTimes {
				if v, ok := om[f]; ok {
					cm[f] = v
				}
			}
			break
		}
	}
}

func sameCondition(a, b map[string]any) bool {
	for _, f := range []string{"type", "status", "reason", "message"} {
		if fmt.Sprint(a[f]) != fmt.Sprint(b[f]) {
			return false
		}
	}
	return true
}
