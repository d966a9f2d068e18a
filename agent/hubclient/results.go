package hubclient

import (
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/proto"
)

// Result records the apply result of a work version and returns the
// messages to send now: the ack, when it is news (the first result of the
// version or a changed one) and a stream of the work's hub is up. An ack
// not sent now is sent after the next SyncDone from that hub. A result for
// a version no longer held is dropped.
func (b *Books) Result(ack *agentv1.Ack) []*agentv1.AgentMessage {
	key := ack.GetWorkKey()
	h, ok := b.works[key]
	if !ok || h.Work.Version != ack.GetVersion() || b.deleting[key] {
		return nil
	}
	prev, had := b.acks[key]
	if had && sameResult(prev.ack, ack) {
		return nil
	}
	b.acks[key] = ackState{ack: ack}
	if !b.canSend(h) {
		return nil
	}
	return []*agentv1.AgentMessage{ackMessage(ack)}
}

// Delivered records that msg reached the stream.
func (b *Books) Delivered(msg *agentv1.AgentMessage) {
	ack := msg.GetAck()
	if ack == nil {
		return
	}
	if a, ok := b.acks[ack.GetWorkKey()]; ok && a.ack == ack {
		b.acks[ack.GetWorkKey()] = ackState{ack: ack, delivered: true}
	}
}

// canSend reports whether a message about h can go to the current stream:
// one is up, welcomed by the hub h came from.
func (b *Books) canSend(h state.Held) bool {
	return b.s != nil && b.s.hub != "" && b.s.hub == h.Hub && !h.Orphaned()
}

// pendingAcks returns the acks not yet delivered that the current stream
// can take, sorted by key.
func (b *Books) pendingAcks() []*agentv1.AgentMessage {
	var out []*agentv1.AgentMessage
	for _, key := range sortedKeys(b.acks) {
		a := b.acks[key]
		if h, ok := b.works[key]; ok && !a.delivered && b.canSend(h) && h.Work.Version == a.ack.GetVersion() {
			out = append(out, ackMessage(a.ack))
		}
	}
	return out
}

func ackMessage(ack *agentv1.Ack) *agentv1.AgentMessage {
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: ack}}
}

func sameResult(a, b *agentv1.Ack) bool {
	return proto.Equal(a, b)
}

// Report returns whether r is to be forwarded: it describes the version
// held of a work from the stream's hub (the hub discards any other).
func (b *Books) Report(r *agentv1.StatusReport) bool {
	h, ok := b.works[r.GetWorkKey()]
	return ok && h.Work.Version == r.GetVersion() && b.canSend(h)
}

// Reported records that r reached the stream: its digest goes into the
// next Hello.
func (b *Books) Reported(r *agentv1.StatusReport) {
	d := state.Digest{Version: r.GetVersion(), Digest: r.GetDigest()}
	if b.digests[r.GetWorkKey()] != d {
		b.digests[r.GetWorkKey()] = d
		b.changes++
	}
}

// DigestChanges counts the changes of the digests so far: the state writer
// compares it from one tick to the next to see whether reports still come.
func (b *Books) DigestChanges() uint64 { return b.changes }

// TakeDigests returns a copy of the digests to persist when they changed
// since the last call, or nil.
func (b *Books) TakeDigests() map[string]state.Digest {
	if b.changes == b.taken {
		return nil
	}
	b.taken = b.changes
	out := make(map[string]state.Digest, len(b.digests))
	for k, d := range b.digests {
		out[k] = d
	}
	return out
}
