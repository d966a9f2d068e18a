package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetherproj/tether/agent/hubclient"
)

// DefaultMemberCheckEvery is how often the agent asks its member API
// server's /readyz for its own /readyz (Config.MemberCheckEvery): one
// cheap request, whatever the probes' rate.
const DefaultMemberCheckEvery = 10 * time.Second

// memberCheckTimeout bounds one check of the member API server.
const memberCheckTimeout = 5 * time.Second

// staleChecks is how many check rounds (an interval and a check's
// timeout) a result stays valid: older, the checker itself is wedged, and
// the agent is neither ready nor live.
const staleChecks = 3

// aliveTimeout bounds /healthz's wait for the hub client's lock; below
// the charts' probe timeout (5 s).
const aliveTimeout = 3 * time.Second

// memberCheck asks the member API server whether it is ready every
// interval, and keeps the last answer for /readyz, which never calls the
// member itself.
type memberCheck struct {
	ping  func(context.Context) error
	every time.Duration
	log   hclog.Logger

	mu      sync.Mutex // guards the fields below
	started time.Time  // when Run started; zero before
	at      time.Time  // when the last check ended; zero before the first
	err     error      // its result
}

// Run checks at once, then every interval, until ctx ends; it returns nil.
func (m *memberCheck) Run(ctx context.Context) error {
	m.mu.Lock()
	m.started = time.Now()
	m.mu.Unlock()
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, memberCheckTimeout)
		err := m.ping(cctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		m.record(err)
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		}
	}
}

// record keeps a check's result, and logs a change.
func (m *memberCheck) record(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err != nil && (m.err == nil || m.at.IsZero()):
		m.log.Warn("member API server not ready", "error", err)
	case err == nil && m.err != nil:
		m.log.Info("member API server ready again")
	}
	m.at, m.err = time.Now(), err
}

// fresh returns an error when the checks have stopped: the last one (or
// the start, before the first) is older than staleChecks rounds.
func (m *memberCheck) fresh(now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	last := m.at
	if last.IsZero() {
		last = m.started
	}
	if last.IsZero() {
		return errors.New("member API server check not started")
	}
	if age := now.Sub(last); age > staleChecks*(m.every+memberCheckTimeout) {
		return fmt.Errorf("member API server check: none ended for %s: the check is wedged", age.Round(time.Second))
	}
	return nil
}

// reachable returns nil when the last check, fresh, found the member API
// server ready.
func (m *memberCheck) reachable(now time.Time) error {
	if err := m.fresh(now); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.at.IsZero():
		return errors.New("member API server not checked yet")
	case m.err != nil:
		return fmt.Errorf("member API server: %w", m.err)
	}
	return nil
}

// health answers /healthz and /readyz from what the agent's parts
// record; neither calls the hub or the member cluster.
type health struct {
	// client is the hub client; nil until the agent has registered.
	client func() *hubclient.Client
	// member is the member API server's check; nil for a member side
	// without one (Config.Member without Ping), always reachable.
	member *memberCheck
}

// live returns nil while the agent's loops go on: the hub client's lock
// can be taken and the member check is fresh. A member API server that is
// down does not make the agent dead.
func (h *health) live(ctx context.Context) error {
	if c := h.client(); c != nil {
		actx, cancel := context.WithTimeout(ctx, aliveTimeout)
		defer cancel()
		if err := c.Alive(actx); err != nil {
			return err
		}
	}
	if h.member != nil {
		return h.member.fresh(time.Now())
	}
	return nil
}

// ready returns nil once the agent has received its hub's SyncDone since
// it started and while the member API server answered its last check.
func (h *health) ready() error {
	var errs []error
	if c := h.client(); c == nil || !c.Synced() {
		errs = append(errs, errors.New("not synced with the hub since the agent started"))
	}
	if h.member != nil {
		if err := h.member.reachable(time.Now()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// handle adds /healthz and /readyz to mux: 200 "ok", or 503 with why.
func (h *health) handle(mux *http.ServeMux) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { writeProbe(w, h.live(r.Context())) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { writeProbe(w, h.ready()) })
}

// writeProbe writes 200 "ok" for nil, else 503 and err's lines.
func writeProbe(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintln(w, err)
		return
	}
	_, _ = fmt.Fprintln(w, "ok")
}
