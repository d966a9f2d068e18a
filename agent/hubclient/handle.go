package hubclient

import (
	"context"
	"fmt"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/protocol"
)

// handle acts on one hub message.
func (s *conn) handle(ctx context.Context, msg *agentv1.HubMessage) error {
	c := s.c
	switch m := msg.GetMessage().(type) {
	case *agentv1.HubMessage_Welcome:
		if err := s.book(func(b *Books) (Effects, error) { return b.Welcome(m.Welcome, c.cfg.Now()) }); err != nil {
			return err
		}
		c.metrics.setStream(streamSyncing)
		c.log.Info("welcomed by the hub", "hub_addr", s.addr, "hub_identity", m.Welcome.GetHubIdentity(), "hub_version", m.Welcome.GetHubVersion())
		s.settings(m.Welcome.GetSettings())
		s.armRenewal()
	case *agentv1.HubMessage_WorkUpsert:
		return s.book(func(b *Books) (Effects, error) { return b.Upsert(m.WorkUpsert) })
	case *agentv1.HubMessage_WorkDelete:
		return s.book(func(b *Books) (Effects, error) { return b.Delete(m.WorkDelete) })
	case *agentv1.HubMessage_SyncDone:
		if err := s.book(func(b *Books) (Effects, error) { return b.SyncDone(m.SyncDone, c.cfg.Now()) }); err != nil {
			return err
		}
		s.res.synced = true
		c.metrics.syncDone(c.cfg.Now())
		c.log.Info("synced with the hub", "hub_works", m.SyncDone.GetWorkCount())
	case *agentv1.HubMessage_StatusRequest:
		if c.cfg.Status != nil {
			c.cfg.Status.Resend(m.StatusRequest.GetWorkKeys())
		}
	case *agentv1.HubMessage_Settings:
		s.settings(m.Settings)
	case *agentv1.HubMessage_Customizations:
		s.customizations(ctx, m.Customizations)
	case *agentv1.HubMessage_Goodbye:
		return s.goodbye(m.Goodbye)
	case *agentv1.HubMessage_CertificateRenewed:
		s.renewed(m.CertificateRenewed)
	default:
		return fmt.Errorf("%w: empty or unknown hub message", ErrProtocol)
	}
	return s.drain()
}

// book runs one Books event under the lock and carries out its effects.
func (s *conn) book(event func(*Books) (Effects, error)) error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	e, err := event(s.c.books)
	if err != nil {
		return err
	}
	s.c.carryOut(e)
	return nil
}

// settings hands the heartbeat interval and resource models to the
// heartbeat goroutine, replacing a value it has not taken yet.
func (s *conn) settings(st *agentv1.Settings) {
	if s.c.cfg.OnSettings != nil && st != nil {
		s.c.cfg.OnSettings(st)
	}
	if st != nil {
		s.c.maxMessageBytes = st.GetLimits().GetMaxMessageBytes()
	}
	b := beatSettings{every: st.GetHeartbeatInterval().AsDuration(), models: st.GetResourceModels()}
	if b.every <= 0 {
		b.every = protocol.HeartbeatInterval // the hub's Settings carry none
	}
	select {
	case <-s.heartbeat:
	default:
	}
	s.heartbeat <- b
}

// goodbye ends the stream as the hub said.
func (s *conn) goodbye(g *agentv1.Goodbye) error {
	s.res.retryAfter = g.GetRetryAfter().AsDuration()
	switch g.GetReason() {
	case agentv1.DisconnectReason_DISCONNECT_REASON_CLUSTER_REMOVED:
		return fmt.Errorf("%w: %s", ErrClusterRemoved, g.GetMessage())
	case agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN, agentv1.DisconnectReason_DISCONNECT_REASON_REBALANCE:
		s.res.moveOn = true // "reconnect, possibly to another"
	}
	return fmt.Errorf("the hub said goodbye (%s): %s", g.GetReason(), g.GetMessage())
}

// beat sends a heartbeat at once after each new Settings, then every
// heartbeat interval, until ctx ends.
func (s *conn) beat(ctx context.Context, out chan<- *agentv1.Heartbeat) {
	ticker := time.NewTicker(time.Hour) // reset by the first Settings
	defer ticker.Stop()
	var cur beatSettings
	var tick <-chan time.Time // nil until the first Settings
	for {
		select {
		case cur = <-s.heartbeat:
			ticker.Reset(cur.every)
			tick = ticker.C
		case <-tick:
		case <-ctx.Done():
			return
		}
		hctx, cancel := context.WithTimeout(ctx, cur.every)
		hb := s.c.heartbeat(hctx, cur.models)
		cancel()
		select {
		case out <- hb:
		case <-ctx.Done():
			return
		}
	}
}

// heartbeat builds one heartbeat; without capacity it carries only the
// agent version, so that the lease never lapses on a slow member.
func (c *Client) heartbeat(ctx context.Context, models []*agentv1.ResourceModel) *agentv1.Heartbeat {
	hb := &agentv1.Heartbeat{}
	if c.cfg.Capacity != nil {
		got, err := c.cfg.Capacity.Heartbeat(ctx, models)
		if err != nil {
			c.log.Warn("capacity not read; heartbeat without it", "error", err)
		} else if got != nil {
			hb = got
		}
	}
	hb.AgentVersion = c.cfg.AgentVersion
	return hb
}
