package hubclient

import (
	"fmt"
	"time"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Delete handles a WorkDelete: carried out only for a work held from the
// stream's hub, after its SyncDone; deferred until SyncDone before it;
// ignored from another hub identity.
func (b *Books) Delete(d *agentv1.WorkDelete) (Effects, error) {
	if err := b.welcomed("WorkDelete"); err != nil {
		return Effects{}, err
	}
	var e Effects
	key := d.GetWorkKey()
	h, ok := b.works[key]
	switch {
	case !ok:
		// Nothing held: acknowledge so the hub stops waiting.
		e.Send = append(e.Send, deletedAck(key))
	case h.Hub != b.s.hub:
		e.note("WorkDelete of %q ignored: the work came from hub %q, not from this hub %q", key, h.Hub, b.s.hub)
	case b.deleting[key]:
		if h.Removal != nil && h.Removal.Evicted {
			r := *h.Removal // now on the hub's word too: acknowledged once done
			r.Evicted = false
			h.Removal = &r
			b.works[key] = h
		}
		e.note("WorkDelete of %q: its deletion is already under way", key)
	case b.lin.Distrusted():
		e.note("WorkDelete of %q ignored: the agent holds this hub not authoritative for it (%s)", key, b.lin.Distrust)
	case h.Unmanaged:
		e.note("WorkDelete of %q ignored: the work is unmanaged since an adoption", key)
	case !b.s.synced:
		b.s.deferred[key] = d
		e.note("WorkDelete of %q deferred until the hub's SyncDone", key)
	default:
		e.decide(b, h, d.GetDeletionPolicy(), reasonOf(d), false)
	}
	return e, nil
}

// reasonOf is d's reason; a hub that predates the field said nothing,
// which is taken as a placement change (the cautious reading: Namespaces
// and CRDs are orphaned, not deleted).
func reasonOf(d *agentv1.WorkDelete) agentv1.DeleteReason {
	if r := d.GetReason(); r != agentv1.DeleteReason_DELETE_REASON_UNSPECIFIED {
		return r
	}
	return agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED
}

// decide records that h's objects are to be deleted with policy for
// reason: the deletion and its record, to persist first.
func (e *Effects) decide(b *Books, h state.Held, policy agentv1.DeletionPolicy, reason agentv1.DeleteReason, evicted bool) {
	if policy == agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED {
		policy = h.Work.DeletionPolicy()
	}
	r := state.Removal{Policy: policy, Reason: reason, Hub: h.Hub, Evicted: evicted}
	h.Removal = &r
	b.works[h.Work.Key] = h
	b.deleting[h.Work.Key] = true
	e.Persist = append(e.Persist, h)
	e.Delete = append(e.Delete, Deletion{Work: h.Work, Removal: r})
}

// Undecide drops the decided deletion of key whose record could not be
// persisted: it must not start. The work is held as before; the deletion
// is decided again on the hub's next word (or the next eviction check).
func (b *Books) Undecide(key string) {
	if h, ok := b.works[key]; ok && b.deleting[key] {
		h.Removal = nil
		b.works[key] = h
		delete(b.deleting, key)
	}
}

// SyncDone ends the stream's initial sync: deferred deletes are carried
// out; when the hub is authoritative, works held from it that its key set
// lacks and that it did not send on this stream are deleted (removed while
// the agent was away); works held from another hub identity that this hub
// did not send are orphaned (from now, unless they already were).
func (b *Books) SyncDone(sd *agentv1.SyncDone, now time.Time) (Effects, error) {
	if err := b.welcomed("SyncDone"); err != nil {
		return Effects{}, err
	}
	if b.s.synced {
		return Effects{}, fmt.Errorf("%w: a second SyncDone on one stream", ErrProtocol)
	}
	b.s.synced = true
	b.s.unvouched = !sd.GetAuthoritative() || b.lin.Distrusted()
	var e Effects
	for _, key := range sortedKeys(b.s.deferred) {
		if h, ok := b.works[key]; ok && h.Hub == b.s.hub && !b.deleting[key] {
			d := b.s.deferred[key]
			e.decide(b, h, d.GetDeletionPolicy(), reasonOf(d), false)
		}
	}
	b.s.deferred = nil
	kept := b.sweep(sd, now, &e)
	if !sd.GetAuthoritative() && kept > int(sd.GetWorkCount()) {
		e.note("the hub has %d works for this cluster and the agent holds %d from it; the hub says its view is not authoritative, so the others are kept until it deletes them", sd.GetWorkCount(), kept)
	}
	e.Send = append(e.Send, b.pendingAcks()...)
	return e, nil
}

// sweep settles every held work against the hub's SyncDone: works of
// this hub that Hello listed (so the hub looked them up) and that an
// authoritative key set lacks are deleted; works of another hub identity
// are orphaned, also only when the SyncDone is authoritative: a hub whose
// store was wiped has a new identity and is not authoritative until an
// operator accepts the store, and must not start a mass orphaning. It
// returns how many works of this hub are kept.
func (b *Books) sweep(sd *agentv1.SyncDone, now time.Time, e *Effects) int {
	var want map[string]bool
	if sd.GetAuthoritative() && !b.lin.Distrusted() {
		want = make(map[string]bool, len(sd.GetWorkKeys()))
		for _, k := range sd.GetWorkKeys() {
			want[k] = true
		}
	}
	if b.settleAdoption(want, e) {
		return len(sd.GetWorkKeys())
	}
	kept := 0
	for _, key := range state.Keys(b.works) {
		h := b.works[key]
		switch {
		case b.deleting[key], h.Unmanaged:
		case h.Hub == b.s.hub && want != nil && !want[key] && !b.s.mentioned[key] && b.s.listed[key]:
			e.decide(b, h, agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED, agentv1.DeleteReason_DELETE_REASON_NOT_IN_HUB_SET, false)
			e.note("work %q deleted: it came from hub %q, whose authoritative list of this cluster's works does not have it", key, h.Hub)
		case h.Hub == b.s.hub:
			kept++
		case want == nil:
			e.note("work %q of hub %q kept, not orphaned: hub %q is not authoritative for this agent", key, h.Hub, b.s.hub)
		case !h.Orphaned():
			h = orphan(h, now)
			b.works[key] = h
			e.Persist = append(e.Persist, h)
			e.note("work %q orphaned: it came from hub %q and hub %q does not have it", key, h.Hub, b.s.hub)
		}
	}
	return kept
}

// Evictions returns the deletions of works orphaned for at least grace at
// now, with their records to persist first; none when grace is 0
// (eviction off), and none while the connected hub says its view is not
// authoritative.
func (b *Books) Evictions(now time.Time, grace time.Duration) Effects {
	var e Effects
	if grace <= 0 || (b.s != nil && b.s.unvouched) || b.lin.Distrusted() {
		return e
	}
	for _, key := range state.Keys(b.works) {
		h := b.works[key]
		if h.Orphaned() && !h.Unmanaged && !b.deleting[key] && now.Sub(h.OrphanedSince) >= grace {
			e.decide(b, h, agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED, agentv1.DeleteReason_DELETE_REASON_ORPHAN_EXPIRED, true)
		}
	}
	return e
}

// Deleted records that d was carried out. It reports whether the work is
// to be forgotten (it was not upserted again meanwhile), and returns the
// DELETED ack to send for a hub's delete while the stream is up.
func (b *Books) Deleted(d Deletion) (forget bool, send []*agentv1.AgentMessage) {
	key := d.Work.Key
	h, ok := b.works[key]
	if !b.deleting[key] || !ok || h.Work.Version != d.Work.Version {
		return false, nil
	}
	delete(b.deleting, key)
	delete(b.works, key)
	delete(b.acks, key)
	if _, ok := b.digests[key]; ok {
		delete(b.digests, key)
		b.changes++
	}
	if h.Removal != nil && !h.Removal.Evicted && b.s != nil && b.s.hub == h.Hub {
		send = append(send, deletedAck(key))
	}
	return true, send
}

func deletedAck(key string) *agentv1.AgentMessage {
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
		WorkKey: key, Result: agentv1.ApplyResult_APPLY_RESULT_DELETED,
	}}}
}
