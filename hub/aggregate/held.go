package aggregate

import (
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// heldAck is what is held of an ack (what trimAck keeps), in place: a hub
// holds one per work and cluster, a million of them in make load-million,
// and a protobuf message each cost an allocation of twice the size
// (issue 16). ok is false when no ack is held. Neither holds the work's
// key: its record does.
type heldAck struct {
	ok      bool
	result  agentv1.ApplyResult
	version string
}

// heldReport is what is held of a status report (what trimReport keeps),
// in place like heldAck; manifest is the template's manifest, when the
// report had it.
type heldReport struct {
	ok              bool
	version, digest string
	manifest        heldManifest
}

// heldManifest is the template's manifest of a report held; ok is false
// when the report had none.
type heldManifest struct {
	ok         bool
	applied    bool
	health     agentv1.Health
	statusJSON []byte
}

// notes are the messages of a failed apply or of the template's manifest,
// which few works have: held out of line, the many without cost one
// pointer (a record: 216 bytes, allocated as 224, instead of 240). Never
// changed in place: held values are copied, and share them.
type notes struct {
	ackMessage, manifestMessage string
}

// holdAck holds a (trimmed) ack.
func (h *held) holdAck(a *agentv1.Ack) {
	h.ack = heldAck{ok: true, result: a.GetResult(), version: a.GetVersion()}
	h.setNotes(func(n *notes) { n.ackMessage = a.GetMessage() })
}

// holdReport holds a (trimmed) report.
func (h *held) holdReport(r *agentv1.StatusReport) {
	h.report = heldReport{ok: true, version: r.GetVersion(), digest: r.GetDigest()}
	message := ""
	if ms := r.GetManifests(); len(ms) > 0 {
		m := ms[0]
		h.report.manifest = heldManifest{ok: true, applied: m.GetApplied(), health: m.GetHealth(), statusJSON: m.GetStatusJson()}
		message = m.GetMessage()
	}
	h.setNotes(func(n *notes) { n.manifestMessage = message })
}

// setNotes gives h a changed copy of its notes, or none when that holds
// nothing.
func (h *held) setNotes(change func(*notes)) {
	n := h.notesOf()
	change(&n)
	if n == (notes{}) {
		h.notes = nil
		return
	}
	h.notes = &n
}

// notesOf is h's notes, empty when it has none.
func (h held) notesOf() notes {
	if h.notes == nil {
		return notes{}
	}
	return *h.notes
}

// ackProto is the ack held of work key, as the trimmed ack it was held
// from; nil when none is.
func (h held) ackProto(key string) *agentv1.Ack {
	if !h.ack.ok {
		return nil
	}
	return &agentv1.Ack{WorkKey: key, Version: h.ack.version, Result: h.ack.result, Message: h.notesOf().ackMessage}
}

// reportProto is the report held of work key, as the trimmed report it
// was held from; nil when none is.
func (h held) reportProto(key string) *agentv1.StatusReport {
	r := h.report
	if !r.ok {
		return nil
	}
	out := &agentv1.StatusReport{WorkKey: key, Version: r.version, Digest: r.digest}
	if m := r.manifest; m.ok {
		out.Manifests = []*agentv1.ManifestStatus{{StatusJson: m.statusJSON, Health: m.health, Applied: m.applied, Message: h.notesOf().manifestMessage}}
	}
	return out
}
