package state

import "time"

// Lineage is what the agent keeps of the store its works came from, with
// the hub identity (Snapshot.HubIdentity): a hub whose store is another,
// or behind what the agent saw, is held not authoritative for this agent
// until an operator adopts the fleet (agent/doc.go, deletion safety).
type Lineage struct {
	// Epoch is the store epoch of the hub last welcomed (Welcome.store_epoch).
	Epoch string `json:"store_epoch,omitempty"`
	// Revision is the highest store revision seen from it.
	Revision int64 `json:"store_revision,omitempty"`
	// Adoption is the id of the last adoption seen in a Welcome.
	Adoption string `json:"adoption,omitempty"`
	// Distrust says why the agent holds the hub not authoritative for it;
	// empty while it does not. Since is when that began.
	Distrust string    `json:"distrust,omitempty"`
	Since    time.Time `json:"distrust_since,omitzero"`
	// Behind is set when Distrust is that the hub's store went back
	// behind Revision: that holds until an adoption, however far the
	// store goes on. Another hub identity or store epoch is judged again
	// at every Welcome.
	Behind bool `json:"behind,omitempty"`
	// Adopting is set from an adoption until the adopting hub's first
	// authoritative SyncDone: the works it does not have are then left
	// unmanaged (deleted with DeleteUnknown).
	Adopting      bool `json:"adopting,omitempty"`
	DeleteUnknown bool `json:"delete_unknown,omitempty"`
}

// Distrusted reports whether the agent holds the hub not authoritative.
func (l Lineage) Distrusted() bool { return l.Distrust != "" }
