package hubclient

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// maxNoteBytes bounds the text the client writes into a message it had to
// shrink, and each message kept from the original: far below the hub's
// bound on one manifest's message (hub/agentapi MaxManifestMessageBytes,
// 16 KiB).
const maxNoteBytes = 1 << 10

// What fit did with a message over the hub's limit: the metric label
// "action" and the log's.
const (
	// actionShrunk: the message was replaced by a smaller one of its kind
	// that says what was left out.
	actionShrunk = "shrunk"
	// actionDropped: nothing of the kind fits; the message was not sent.
	actionDropped = "dropped"
)

// fit returns msg, or when it is larger than limit bytes (the hub's
// Settings.limits.max_message_bytes; 0 for none known) a smaller message
// of the same kind that says what it left out, and what it did
// (actionShrunk, or actionDropped with a nil message). The hub ends a
// stream that sends it a message over its limit, and the agent would send
// the same message again on the next one, so nothing over it is ever sent:
//
//   - a StatusReport keeps its work, version, digest and each manifest's
//     identity, health and applied flag; the statuses are left out and
//     each manifest's message says how large the report was (the hub
//     records the digest, so it does not ask for the report again until
//     the status changes);
//   - an Ack keeps its work, version and result, its message truncated and
//     naming the sizes; the per-object results are left out;
//   - a Heartbeat is sent with only the agent version (as when capacity
//     cannot be read: the lease is what must not lapse);
//   - a CustomizationsAck keeps its version and one refusal line naming
//     the sizes.
//
// Anything else over the limit, or a shrunk message still over it, is
// dropped.
func fit(msg *agentv1.AgentMessage, limit int64) (*agentv1.AgentMessage, string) {
	size := int64(proto.Size(msg))
	if limit <= 0 || size <= limit {
		return msg, ""
	}
	note := fmt.Sprintf("left out by the agent: the message was %d bytes, more than the hub's limit of %d bytes (Settings.limits.max_message_bytes)", size, limit)
	var out *agentv1.AgentMessage
	switch m := msg.GetMessage().(type) {
	case *agentv1.AgentMessage_StatusReport:
		out = shrinkReport(m.StatusReport, "status "+note)
	case *agentv1.AgentMessage_Ack:
		out = shrinkAck(m.Ack, note)
	case *agentv1.AgentMessage_Heartbeat:
		out = &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: &agentv1.Heartbeat{
			AgentVersion: truncate(m.Heartbeat.GetAgentVersion(), maxNoteBytes),
		}}}
	case *agentv1.AgentMessage_CustomizationsAck:
		out = &agentv1.AgentMessage{Message: &agentv1.AgentMessage_CustomizationsAck{CustomizationsAck: &agentv1.CustomizationsAck{
			Version: m.CustomizationsAck.GetVersion(), Refused: []string{"refusals " + note},
		}}}
	}
	if out == nil || int64(proto.Size(out)) > limit {
		return nil, actionDropped
	}
	return out, actionShrunk
}

// shrinkReport is r without its statuses, each manifest's message being
// note. It is what hub/agentapi ValidateStatusReport accepts: the work
// key and version (required there) and, per manifest, a known health, a
// message of at most maxNoteBytes and no status_json.
func shrinkReport(r *agentv1.StatusReport, note string) *agentv1.AgentMessage {
	note = truncate(note, maxNoteBytes)
	out := &agentv1.StatusReport{
		WorkKey: r.GetWorkKey(), Version: r.GetVersion(), Digest: r.GetDigest(), ObserveTime: r.GetObserveTime(),
		Manifests: make([]*agentv1.ManifestStatus, 0, len(r.GetManifests())),
	}
	for _, m := range r.GetManifests() {
		health := m.GetHealth()
		if _, ok := agentv1.Health_name[int32(health)]; !ok {
			health = agentv1.Health(0)
		}
		out.Manifests = append(out.Manifests, &agentv1.ManifestStatus{
			Identity: m.GetIdentity(), Health: health, Applied: m.GetApplied(), Message: note,
		})
	}
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: out}}
}

// shrinkAck is a without its object results, its message truncated and
// followed by note.
func shrinkAck(a *agentv1.Ack, note string) *agentv1.AgentMessage {
	var msg string
	if a.GetMessage() != "" {
		msg = truncate(a.GetMessage(), maxNoteBytes) + " (object results " + note + ")"
	} else {
		msg = "object results " + note
	}
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
		WorkKey: a.GetWorkKey(), Version: a.GetVersion(), Result: a.GetResult(), Message: msg,
	}}}
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
