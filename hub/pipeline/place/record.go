package place

import (
	"encoding/json"
	"fmt"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// MessageScheduled is Karmada's success message of the Scheduled
// condition.
const MessageScheduled = "Binding has been scheduled successfully."

// Graceful eviction tasks the taint manager creates (Karmada's values).
const (
	EvictionProducer = "TaintManager"
	EvictionReason   = "TaintUntolerated"
)

// JSONString is the compact JSON of v; the API types always marshal.
func JSONString(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("scheduler: marshal %T: %v", v, err))
	}
	return string(data)
}

// clonePlacement deep-copies a placement (the API types have no DeepCopy).
func clonePlacement(p *policyv1alpha1.Placement) *policyv1alpha1.Placement {
	out := &policyv1alpha1.Placement{}
	if err := json.Unmarshal([]byte(JSONString(p)), out); err != nil {
		panic(fmt.Sprintf("scheduler: copy placement: %v", err))
	}
	return out
}

// CloneBinding copies a binding through its JSON form, which is the form
// the store holds anyway, except its aggregated status, which the copy
// shares: the scheduler only reads it (hub/aggregate writes it), and with
// one item per target cluster it is most of a widely placed binding (at
// 1,000 clusters, copying it took most of Step's time).
func CloneBinding(b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	rest := *b
	rest.Status.AggregatedStatus = nil
	out := &workv1alpha1.ResourceBinding{}
	if err := json.Unmarshal([]byte(JSONString(&rest)), out); err != nil {
		panic(fmt.Sprintf("scheduler: copy binding: %v", err))
	}
	out.InternNames()
	out.Status.AggregatedStatus = b.Status.AggregatedStatus
	return out
}
