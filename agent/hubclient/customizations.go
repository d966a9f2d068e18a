package hubclient

import (
	"context"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// loadHeldCustomizations loads the set the state holds, so that an agent
// restarted while the hub is unreachable applies its works with the
// user's rules (retain) from the start.
func (c *Client) loadHeldCustomizations(set *agentv1.Customizations) {
	if c.cfg.Customizations == nil || set == nil {
		return
	}
	if _, err := c.cfg.Customizations.Load(context.Background(), set); err != nil {
		c.log.Error("held customizations not loaded; the agent runs with the built-in rules until the hub sends them again",
			"version", set.GetVersion(), "error", err)
	}
}

// customizations loads a set the hub sent, has it persisted, and acknowledges
// it with what was refused. A set refused as a whole is not persisted:
// the agent keeps the one it holds, and the hub hears why.
func (s *conn) customizations(ctx context.Context, set *agentv1.Customizations) {
	c := s.c
	if c.cfg.Customizations == nil {
		return
	}
	refused, err := c.cfg.Customizations.Load(ctx, set)
	if err != nil {
		c.log.Error("customizations refused; the agent keeps the set it holds", "version", set.GetVersion(), "error", err)
		refused = []string{err.Error()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil { // written by the state writer
		c.unsavedState.customizations = set
		c.saveSoon()
	}
	c.post(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_CustomizationsAck{CustomizationsAck: &agentv1.CustomizationsAck{
		Version: set.GetVersion(), Refused: refused,
	}}})
}

// customizationsVersion is the version Hello names: the set loaded.
func (c *Client) customizationsVersion() string {
	if c.cfg.Customizations == nil {
		return ""
	}
	return c.cfg.Customizations.Version()
}
