package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetherproj/tether/agent/hubclient"
)

// TestMemberCheckFreshness: no check yet and a check older than
// staleChecks rounds are errors (the check is wedged); a fresh failed
// check makes the member unreachable but not the agent dead.
func TestMemberCheckFreshness(t *testing.T) {
	m := &memberCheck{every: time.Second, log: hclog.NewNullLogger()}
	if err := m.fresh(time.Now()); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Errorf("fresh() before Run = %v; want not started", err)
	}
	m.started = time.Now()
	if err := m.fresh(time.Now()); err != nil {
		t.Errorf("fresh() at the start = %v; want nil", err)
	}
	if err := m.reachable(time.Now()); err == nil || !strings.Contains(err.Error(), "not checked yet") {
		t.Errorf("reachable() before a check = %v; want not checked yet", err)
	}
	if err := m.fresh(m.started.Add(staleChecks*(m.every+memberCheckTimeout) + time.Second)); err == nil || !strings.Contains(err.Error(), "wedged") {
		t.Errorf("fresh() long after a start without a check = %v; want wedged", err)
	}
	m.record(errors.New("connection refused"))
	if err := m.fresh(time.Now()); err != nil {
		t.Errorf("fresh() after a failed check = %v; want nil", err)
	}
	if err := m.reachable(time.Now()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("reachable() after a failed check = %v; want its error", err)
	}
	m.record(nil)
	late := time.Now().Add(staleChecks*(m.every+memberCheckTimeout) + time.Second)
	if err := m.fresh(late); err == nil || !strings.Contains(err.Error(), "wedged") {
		t.Errorf("fresh() %d rounds later = %v; want wedged", staleChecks, err)
	}
	h := &health{client: func() *hubclient.Client { return nil }, member: m}
	if err := h.live(context.Background()); err != nil {
		t.Errorf("live() with a fresh check = %v; want nil", err)
	}
	if err := h.ready(); err == nil || !strings.Contains(err.Error(), "not synced") {
		t.Errorf("ready() without a client = %v; want not synced", err)
	}
}
