package agentapi

import (
	"fmt"
	"strings"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// customState is where a stream is in following the customizations: the
// version the agent holds (from Hello, then what the stream sent), the
// message to send at start, if any, and the channel closed when the set
// the stream last read is replaced. An agent that does not support them
// (unsupported) is sent none.
type customState struct {
	held        string
	msg         *agentv1.HubMessage
	changed     <-chan struct{}
	unsupported bool
}

// customizationsFor reads the current set and says what to send the agent
// of hello: the set, when its version differs from the agent's. Before the
// hub has loaded its set, nothing is sent: the agent keeps what it holds.
func (s *Server) customizationsFor(hello *agentv1.Hello) customState {
	cs := customState{held: hello.GetCustomizationsVersion(), unsupported: !hello.GetCustomizationsSupported()}
	if s.cfg.Customizations == nil {
		return cs
	}
	var set *agentv1.Customizations
	set, cs.changed = s.cfg.Customizations.Customizations()
	cs.offer(set)
	return cs
}

// offer sets msg to set when the agent does not hold its version (and
// supports customizations).
func (cs *customState) offer(set *agentv1.Customizations) {
	cs.msg = nil
	if set == nil || set.GetVersion() == cs.held || cs.unsupported {
		return
	}
	cs.msg = &agentv1.HubMessage{Message: &agentv1.HubMessage_Customizations{Customizations: set}}
	cs.held = set.GetVersion()
}

// nextCustomizations reads the set that replaced the one cs last read
// and sends it to the agent, ahead of the works queued then, when the agent
// does not hold it (settingsFollow).
func (s *Server) nextCustomizations(st *stream, cs *customState) {
	var set *agentv1.Customizations
	set, cs.changed = s.cfg.Customizations.Customizations()
	cs.offer(set)
	if cs.msg != nil {
		st.log.Debug("sending customizations", "version", set.GetVersion())
		st.reply(cs.msg)
	}
	warnUnsupported(st, *cs, set)
}

// warnUnsupported logs that an agent that does not support customizations
// runs without set.
func warnUnsupported(st *stream, cs customState, set *agentv1.Customizations) {
	if cs.unsupported && set.GetVersion() != "" {
		st.log.Warn("the agent predates interpreter customizations: the user's rules (retain, health, status) do not run in this member until it is upgraded",
			"version", set.GetVersion())
	}
}

// customizationsAck logs what the agent made of a set: an agent that
// refused part of it runs without those rules, which must be seen.
// Its strings are clipped to maxLoggedBytes each, so that an agent cannot
// make the hub write megabytes of log per ack.
func (st *stream) customizationsAck(a *agentv1.CustomizationsAck) {
	version := clip(a.GetVersion())
	if len(a.GetRefused()) == 0 {
		st.log.Info("agent loaded the customizations", "version", version)
		return
	}
	refused := make([]string, 0, min(len(a.GetRefused()), maxLoggedRefusals)+1)
	for _, r := range a.GetRefused()[:min(len(a.GetRefused()), maxLoggedRefusals)] {
		refused = append(refused, clip(r))
	}
	if len(a.GetRefused()) > maxLoggedRefusals {
		refused = append(refused, "...")
	}
	st.log.Warn("agent refused customizations; it runs without their rules", "version", version,
		"refused", len(a.GetRefused()), "which", refused)
}

// Bounds of what one customizations ack makes the hub log.
const (
	// maxLoggedRefusals is the most refusals of one ack logged.
	maxLoggedRefusals = 10
	// maxLoggedBytes is the longest string of an ack logged, bytes; an
	// agent's refusal names a customization and why in far less.
	maxLoggedBytes = 1 << 10
)

// clip returns s cut to maxLoggedBytes, saying so.
func clip(s string) string {
	if len(s) <= maxLoggedBytes {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", strings.ToValidUTF8(s[:maxLoggedBytes], ""), len(s))
}
