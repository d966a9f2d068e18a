package aggregate

import (
	"unique"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// content is what a record holds of its work's last ack and report,
// without when they were received: trimmed as trimAck and trimReport trim
// them, and without the work's key (the record has it). A template
// Duplicated to a thousand clusters is acked and reported the same in
// most of them, so records share their content (unique.Make): each holds
// an 8-byte handle instead of its own 120 bytes and more (issue 16: a
// million of them in make load-million).
type content struct {
	// latest is the version of the last ack or report received.
	latest string
	ack    heldAck
	report heldReport
	// The messages of a failed apply and of the template's manifest.
	ackMessage, manifestMessage string
}

// heldAck is what is held of an ack; ok is false when no ack is held.
type heldAck struct {
	ok      bool
	result  agentv1.ApplyResult
	version string
}

// heldReport is what is held of a status report; manifest is the
// template's manifest, when the report had it.
type heldReport struct {
	ok              bool
	version, digest string
	manifest        heldManifest
}

// heldManifest is the template's manifest of a report held; ok is false
// when the report had none. status is its status JSON.
type heldManifest struct {
	ok      bool
	applied bool
	health  agentv1.Health
	status  string
}

// content is what h holds of its work's ack and report; empty when
// nothing.
func (h held) content() content {
	if h.c == (unique.Handle[content]{}) {
		return content{}
	}
	return h.c.Value()
}

// setContent makes h hold c, shared with every record that holds the same.
func (h *held) setContent(c content) {
	h.c = unique.Make(c)
}

// holdAck holds a (trimmed) ack.
func (c *content) holdAck(a *agentv1.Ack) {
	c.ack = heldAck{ok: true, result: a.GetResult(), version: a.GetVersion()}
	c.ackMessage = a.GetMessage()
}

// holdReport holds a (trimmed) report.
func (c *content) holdReport(r *agentv1.StatusReport) {
	c.report = heldReport{ok: true, version: r.GetVersion(), digest: r.GetDigest()}
	c.manifestMessage = ""
	if ms := r.GetManifests(); len(ms) > 0 {
		m := ms[0]
		c.report.manifest = heldManifest{ok: true, applied: m.GetApplied(), health: m.GetHealth(), status: string(m.GetStatusJson())}
		c.manifestMessage = m.GetMessage()
	}
}

// ackProto is the ack held of work key, as the trimmed ack it was held
// from; nil when none is.
func (c content) ackProto(key string) *agentv1.Ack {
	if !c.ack.ok {
		return nil
	}
	return &agentv1.Ack{WorkKey: key, Version: c.ack.version, Result: c.ack.result, Message: c.ackMessage}
}

// reportProto is the report held of work key, as the trimmed report it
// was held from; nil when none is.
func (c content) reportProto(key string) *agentv1.StatusReport {
	r := c.report
	if !r.ok {
		return nil
	}
	out := &agentv1.StatusReport{WorkKey: key, Version: r.version, Digest: r.digest}
	if m := r.manifest; m.ok {
		var status []byte
		if m.status != "" {
			status = []byte(m.status)
		}
		out.Manifests = []*agentv1.ManifestStatus{{StatusJson: status, Health: m.health, Applied: m.applied, Message: c.manifestMessage}}
	}
	return out
}
