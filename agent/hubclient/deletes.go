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
	case !b.s.synced:
		b.s.deferred[key] = d.GetDeletionPolicy()
		e.note("WorkDelete of %q deferred until the hub's SyncDone", key)
	default:
		e.Delete = append(e.Delete, b.decide(h, d.GetDeletionPolicy(), false))
	}
	return e, nil
}

// decide records that h's objects are to be deleted with policy.
func (b *Books) decide(h state.Held, policy agentv1.DeletionPolicy, evicted bool) Deletion {
	if policy == agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED {
		policy = h.Work.DeletionPolicy()
	}
	b.deleting[h.Work.Key] = true
	return Deletion{Work: h.Work, Policy: policy, Evicted: evicted}
}

// SyncDone ends the stream's initial sync: deferred deletes are carried
// out, and works held from another hub identity that this hub did not send
// are orphaned (from now, unless they already were).
func (b *Books) SyncDone(sd *agentv1.SyncDone, now time.Time) (Effects, error) {
	if err := b.welcomed("SyncDone"); err != nil {
		return Effects{}, err
	}
	if b.s.synced {
		return Effects{}, fmt.Errorf("%w: a second SyncDone on one stream", ErrProtocol)
	}
	b.s.synced = true
	var e Effects
	for _, key := range sortedKeys(b.s.deferred) {
		if h, ok := b.works[key]; ok && h.Hub == b.s.hub {
			e.Delete = append(e.Delete, b.decide(h, b.s.deferred[key], false))
		}
	}
	b.s.deferred = nil
	fromHub := 0
	for _, key := range state.Keys(b.works) {
		h := b.works[key]
		if h.Hub == b.s.hub {
			fromHub++
			continue
		}
		if !h.Orphaned() && !b.deleting[key] {
			h = orphan(h, now)
			b.works[key] = h
			e.Persist = append(e.Persist, h)
			e.note("work %q orphaned: it came from hub %q and hub %q does not have it", key, h.Hub, b.s.hub)
		}
	}
	if n := int(sd.GetWorkCount()); n < fromHub-len(e.Delete) {
		e.note("the hub has %d works for this cluster and the agent holds %d from it: the others are kept until the hub deletes them", n, fromHub-len(e.Delete))
	}
	e.Send = append(e.Send, b.pendingAcks()...)
	return e, nil
}

// Evictions returns the deletions of works orphaned for at least grace at
// now; none when grace is 0 (eviction off).
func (b *Books) Evictions(now time.Time, grace time.Duration) []Deletion {
	if grace <= 0 {
		return nil
	}
	var out []Deletion
	for _, key := range state.Keys(b.works) {
		h := b.works[key]
		if h.Orphaned() && !b.deleting[key] && now.Sub(h.OrphanedSince) >= grace {
			out = append(out, b.decide(h, agentv1.DeletionPolicy_DELETION_POLICY_UNSPECIFIED, true))
		}
	}
	return out
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
		b.dirty = true
	}
	if !d.Evicted && b.s != nil && b.s.hub == h.Hub {
		send = append(send, deletedAck(key))
	}
	return true, send
}

func deletedAck(key string) *agentv1.AgentMessage {
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
		WorkKey: key, Result: agentv1.ApplyResult_APPLY_RESULT_DELETED,
	}}}
}
