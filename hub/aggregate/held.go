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
	ok               bool
	result           agentv1.ApplyResult
	version, message string
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
	message    string
}

// holdAck is what is held of a (trimmed) ack.
func holdAck(a *agentv1.Ack) heldAck {
	return heldAck{ok: true, result: a.GetResult(), version: a.GetVersion(), message: a.GetMessage()}
}

// holdReport is what is held of a (trimmed) report.
func holdReport(r *agentv1.StatusReport) heldReport {
	h := heldReport{ok: true, version: r.GetVersion(), digest: r.GetDigest()}
	if ms := r.GetManifests(); len(ms) > 0 {
		m := ms[0]
		h.manifest = heldManifest{ok: true, applied: m.GetApplied(), health: m.GetHealth(), statusJSON: m.GetStatusJson(), message: m.GetMessage()}
	}
	return h
}

// proto is the ack held of work key, as the trimmed ack it was held from;
// nil when none is.
func (a heldAck) proto(key string) *agentv1.Ack {
	if !a.ok {
		return nil
	}
	return &agentv1.Ack{WorkKey: key, Version: a.version, Result: a.result, Message: a.message}
}

// proto is the report held of work key, as the trimmed report it was held
// from; nil when none is.
func (r heldReport) proto(key string) *agentv1.StatusReport {
	if !r.ok {
		return nil
	}
	out := &agentv1.StatusReport{WorkKey: key, Version: r.version, Digest: r.digest}
	if m := r.manifest; m.ok {
		out.Manifests = []*agentv1.ManifestStatus{{StatusJson: m.statusJSON, Health: m.health, Applied: m.applied, Message: m.message}}
	}
	return out
}
