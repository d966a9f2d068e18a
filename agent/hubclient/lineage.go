package hubclient

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// maxUnmanagedListed is how many unmanaged work keys a heartbeat's
// UnmanagedWorks condition names; the count is always whole.
const maxUnmanagedListed = 20

// Condition types the agent adds to its heartbeats while they apply.
const (
	// ConditionHubTrusted is False while the agent holds the hub not
	// authoritative for it (its store is another one, or behind what the
	// agent saw), with why.
	ConditionHubTrusted = "HubTrusted"
	// ConditionUnmanagedWorks is True while the agent keeps works an
	// adopting hub did not have, naming them.
	ConditionUnmanagedWorks = "UnmanagedWorks"
)

// distrust returns why the agent must hold the hub that sent w not
// authoritative for it, given what it recorded of the hub its works came
// from ("" when it need not), and whether that is because the store went
// back (behind: sticky until an adoption, since the store passes the
// revision again as it goes on). Another identity or epoch is judged
// again at every Welcome: the hub the works came from may come back. A
// hub that sends no epoch or revision (predating them) is not judged by
// them.
func distrust(identity string, l state.Lineage, w *agentv1.Welcome) (why string, behind bool) {
	switch {
	case w.GetHubIdentity() != identity:
		return fmt.Sprintf("hub identity %s is not %s, the hub this agent's works came from (another hub, or one whose store lost its identity)",
			w.GetHubIdentity(), identity), false
	case l.Epoch != "" && w.GetStoreEpoch() != "" && w.GetStoreEpoch() != l.Epoch:
		return fmt.Sprintf("the hub's store epoch %s is not %s, the store this agent's works came from: the store was replaced or wiped",
			w.GetStoreEpoch(), l.Epoch), false
	case w.GetStoreRevision() > 0 && w.GetStoreRevision() < l.Revision:
		return fmt.Sprintf("the hub's store is at revision %d, behind revision %d this agent has seen: the store was restored from an older copy",
			w.GetStoreRevision(), l.Revision), true
	}
	return "", false
}

// adopts reports whether w carries an adoption that lets an agent whose
// works came from identity, and that saw the adoption lastSeen last,
// trust the hub again.
func adopts(w *agentv1.Welcome, identity, lastSeen string) bool {
	ad := w.GetAdoption()
	return ad.GetId() != "" && ad.GetId() != lastSeen && slices.Contains(ad.GetIdentities(), identity)
}

// welcomeLineage decides, at Welcome, whether the agent trusts the hub
// (b.lin.Distrust), adopts it, or raises what it recorded of its store.
func (b *Books) welcomeLineage(w *agentv1.Welcome, now time.Time, e *Effects) {
	why, behind := distrust(b.hub, b.lin, w)
	switch {
	case why != "" && why != b.lin.Distrust && !b.lin.Behind:
		b.lin.Distrust, b.lin.Behind, b.lin.Since = why, behind, now
		e.note("the hub is NOT AUTHORITATIVE for this agent: %s. It keeps every work as it is (no delete, no orphaning, "+
			"no change to a work it holds) until an operator adopts the fleet on the hub (tether-hub --accept-store-reset, or --adopt-identity %s)", why, b.hub)
		e.saveLineage(true)
	case why == "" && b.lin.Distrusted() && !b.lin.Behind:
		e.note("hub %s, which this agent's works came from, is back: trusted again (%s no longer holds)", b.hub, b.lin.Distrust)
		b.lin.Distrust, b.lin.Since = "", time.Time{}
		e.saveLineage(true)
	}
	if b.lin.Distrusted() && adopts(w, b.hub, b.lin.Adoption) {
		ad := w.GetAdoption()
		e.note("the hub's adoption %s names hub identity %s: the agent trusts hub %s again; the works it does not have are %s",
			ad.GetId(), b.hub, w.GetHubIdentity(), map[bool]string{true: "deleted", false: "kept in place, unmanaged"}[ad.GetDeleteUnknown()])
		b.lin = state.Lineage{Epoch: w.GetStoreEpoch(), Revision: w.GetStoreRevision(), Adoption: ad.GetId(),
			Adopting: true, DeleteUnknown: ad.GetDeleteUnknown()}
		e.saveLineage(true)
		return
	}
	if b.lin.Distrusted() {
		return
	}
	if ad := w.GetAdoption().GetId(); ad != "" && ad != b.lin.Adoption {
		b.lin.Adoption = ad // seen: a store restored to before it cannot adopt this agent with it
		e.saveLineage(true)
	}
	if b.lin.Epoch == "" && w.GetStoreEpoch() != "" {
		b.lin.Epoch = w.GetStoreEpoch()
		e.saveLineage(true)
	}
	b.raise(w.GetStoreRevision(), e)
}

// raise records that the hub's store has reached rev, while trusted.
func (b *Books) raise(rev int64, e *Effects) {
	if rev > b.lin.Revision && !b.lin.Distrusted() {
		b.lin.Revision = rev
		e.saveLineage(false)
	}
}

// saveLineage asks for the hub record to be written: at once when now is
// set (a trust decision), else with the next periodic write (a revision).
func (e *Effects) saveLineage(now bool) {
	e.Lineage = true
	e.LineageNow = e.LineageNow || now
}

// Lineage returns what the agent recorded of its hub's store.
func (b *Books) Lineage() state.Lineage { return b.lin }

// Conditions returns the conditions the agent adds to its heartbeats: the
// hub not trusted, and works kept unmanaged; none while neither applies.
func (b *Books) Conditions(now time.Time) []*agentv1.Condition {
	var out []*agentv1.Condition
	if b.lin.Distrusted() {
		out = append(out, &agentv1.Condition{Type: ConditionHubTrusted, Status: agentv1.ConditionStatus_CONDITION_STATUS_FALSE,
			Reason: "HubNotAuthoritative", Message: b.lin.Distrust, LastTransitionTime: timestamppb.New(cmp.Or(b.lin.Since, now))})
	}
	var keys []string
	for k, h := range b.works { // every heartbeat: sort only the unmanaged
		if h.Unmanaged {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		listed := keys[:min(len(keys), maxUnmanagedListed)]
		msg := fmt.Sprintf("%d works kept in place, unmanaged: an adopting hub did not have them: %v", len(keys), listed)
		if len(keys) > len(listed) {
			msg += fmt.Sprintf(" and %d more", len(keys)-len(listed))
		}
		out = append(out, &agentv1.Condition{Type: ConditionUnmanagedWorks, Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE,
			Reason: "Adopted", Message: msg})
	}
	return out
}

// settleAdoption resolves, at the adopting hub's first authoritative
// SyncDone, every work it did not send or list: kept unmanaged, or
// deleted when the adoption says so. Works it sent or listed are claimed
// by it. It reports whether it resolved anything (false outside an
// adoption, or for a SyncDone that is not authoritative: the next one
// resolves them).
func (b *Books) settleAdoption(want map[string]bool, e *Effects) bool {
	if !b.lin.Adopting || want == nil {
		return false
	}
	for _, key := range state.Keys(b.works) {
		h := b.works[key]
		switch {
		case b.deleting[key], h.Unmanaged:
		case want[key] || b.s.mentioned[key]:
			if h.Hub != b.s.hub || h.Orphaned() {
				h.Hub, h.OrphanedSince = b.s.hub, time.Time{}
				b.works[key] = h
				e.Persist = append(e.Persist, h)
			}
		case b.lin.DeleteUnknown:
			e.decide(b, h, agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED, agentv1.DeleteReason_DELETE_REASON_NOT_IN_HUB_SET, false)
			e.note("work %q deleted: the adopting hub %q does not have it, and its adoption says to delete such works", key, b.s.hub)
		default:
			h.Unmanaged = true
			b.works[key] = h
			e.Persist = append(e.Persist, h)
			e.note("work %q kept in place, unmanaged: the adopting hub %q does not have it", key, b.s.hub)
		}
	}
	b.lin.Adopting, b.lin.DeleteUnknown = false, false
	e.saveLineage(true)
	return true
}
