package aggregate

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// Observed is what the hub holds of one cluster's work of a binding, as
// of one version: what the rollout loop (hub/rollout) gates on.
type Observed struct {
	// Version is the version the agent last acked or reported.
	Version string
	// Acked is whether an ack of Version is held; Applied and Message
	// are its result (else the report's, as the binding's item reads).
	Acked   bool
	Applied bool
	Message string
	// Health is the binding item's health for Version (Unknown when the
	// report held is of an older version).
	Health configv1alpha1.ResourceHealth
}

// Observed returns, by cluster, what the hub holds of the works of the
// binding b stored at bkey, as the binding's items read it (itemOf). It
// only reads memory.
func (a *Aggregator) Observed(bkey string, b *workv1alpha1.ResourceBinding) map[string]Observed {
	gv, _ := schema.ParseGroupVersion(b.Spec.Resource.APIVersion)
	hook := a.interp.HookEnabled(gv.WithKind(b.Spec.Resource.Kind), configv1alpha1.InterpreterOperationInterpretHealth)
	out := map[string]Observed{}
	for cluster, obs := range a.observations(bkey) {
		it := itemOf(cluster, obs, &b.Spec.Resource, hook)
		o := Observed{Version: obs.Latest, Applied: it.Applied, Message: it.AppliedMessage, Health: it.Health}
		o.Acked = obs.Ack != nil && obs.Ack.GetVersion() == obs.Latest && obs.Ack.GetResult() != agentv1.ApplyResult_APPLY_RESULT_UNSPECIFIED
		out[cluster] = o
	}
	return out
}
