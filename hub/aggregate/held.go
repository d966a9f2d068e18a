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

// rare is what few works have, held out of line so that the many without
// it cost one pointer (held, record: 192 bytes a work instead of 240): the
// messages of a failed apply or of the template's manifest, and the
// versions the work moved past. Never changed in place: held values are
// copied, and share it.
type rare struct {
	ackMessage, manifestMessage string
	old                         []superseded // oldest first
}

// holdAck holds a (trimmed) ack.
func (h *held) holdAck(a *agentv1.Ack) {
	h.ack = heldAck{ok: true, result: a.GetResult(), version: a.GetVersion()}
	h.setRare(func(r *rare) { r.ackMessage = a.GetMessage() })
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
	h.setRare(func(x *rare) { x.manifestMessage = message })
}

// setRare gives h a changed copy of its rare, or none when that holds
// nothing.
func (h *held) setRare(change func(*rare)) {
	r := h.rareOf()
	change(&r)
	if r.ackMessage == "" && r.manifestMessage == "" && len(r.old) == 0 {
		h.rare = nil
		return
	}
	h.rare = &r
}

// rareOf is h's rare, empty when it has none.
func (h held) rareOf() rare {
	if h.rare == nil {
		return rare{}
	}
	return *h.rare
}

// ackProto is the ack held of work key, as the trimmed ack it was held
// from; nil when none is.
func (h held) ackProto(key string) *agentv1.Ack {
	if !h.ack.ok {
		return nil
	}
	return &agentv1.Ack{WorkKey: key, Version: h.ack.version, Result: h.ack.result, Message: h.rareOf().ackMessage}
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
		out.Manifests = []*agentv1.ManifestStatus{{StatusJson: m.statusJSON, Health: m.health, Applied: m.applied, Message: h.rareOf().manifestMessage}}
	}
	return out
}
