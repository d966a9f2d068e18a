package state

import (
	"fmt"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Removal is a decided deletion of a held work's objects: how, why and on
// whose word. The agent records it with the work (Held.Removal) before the
// deletion starts, so that an agent restarted in the middle finishes the
// deletion instead of applying the work again.
type Removal struct {
	// Policy says whether the objects are deleted or orphaned; never
	// UNSPECIFIED once decided.
	Policy agentv1.DeletionPolicy
	// Reason is why: the hub's WorkDelete reason, NOT_IN_HUB_SET for a
	// work an authoritative SyncDone did not list, ORPHAN_EXPIRED for an
	// eviction after the grace period.
	Reason agentv1.DeleteReason
	// Hub is the identity of the hub whose instruction it is (the work's
	// hub), for the log.
	Hub string
	// Evicted is true for an eviction after the grace period (no hub
	// asked for it, so none is acknowledged), false for a hub's word.
	Evicted bool
}

// removalDoc is Removal as stored, enums by name.
type removalDoc struct {
	Policy  string `json:"deletion_policy"`
	Reason  string `json:"reason"`
	Hub     string `json:"hub_identity"`
	Evicted bool   `json:"evicted,omitempty"`
}

func (r Removal) doc() *removalDoc {
	return &removalDoc{Policy: r.Policy.String(), Reason: r.Reason.String(), Hub: r.Hub, Evicted: r.Evicted}
}

// removal parses a stored removal; an unknown enum name is an error.
func (d *removalDoc) removal() (Removal, error) {
	p, ok := agentv1.DeletionPolicy_value[d.Policy]
	if !ok || p == int32(agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED) {
		return Removal{}, fmt.Errorf("pending removal with deletion policy %q", d.Policy)
	}
	r, ok := agentv1.DeleteReason_value[d.Reason]
	if !ok {
		return Removal{}, fmt.Errorf("pending removal with reason %q", d.Reason)
	}
	return Removal{Policy: agentv1.DeletionPolicy(p), Reason: agentv1.DeleteReason(r), Hub: d.Hub, Evicted: d.Evicted}, nil
}
