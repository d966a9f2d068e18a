package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counted is a real HTTPS server that counts the connections it accepts
// and the requests it receives.
type counted struct {
	*httptest.Server
	conns, hits atomic.Int64
}

func newCounted(t *testing.T, h http.HandlerFunc) *counted {
	c := &counted{}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		h(w, r)
	}))
	c.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.conns.Add(1)
		}
	}
	c.StartTLS()
	t.Cleanup(c.Close)
	return c
}

func healthyAnswer(w http.ResponseWriter, r *http.Request) {
	var in Context
	healthy := true
	if err := decodeJSON(r, &in); err != nil || in.Request == nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	writeJSON(w, Context{TypeMeta: typeMeta(), Response: &Response{UID: in.Request.UID, Successful: true, Healthy: &healthy}})
}

func TestWebhookRedirectsNotFollowed(t *testing.T) {
	var plainHits atomic.Int64
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		healthyAnswer(w, r)
	}))
	t.Cleanup(plain.Close)
	for _, to := range []struct {
		name string
		url  func(target string) string
		hits func(target *counted) int64
	}{
		{"https", func(target string) string { return target + "/hook" }, func(c *counted) int64 { return c.hits.Load() }},
		{"plain http", func(string) string { return plain.URL + "/hook" }, func(*counted) int64 { return plainHits.Load() }},
		// Nothing listens there in a test; the error must still be the redirect's.
		{"metadata", func(string) string { return "http://169.254.169.254/latest/meta-data/iam/security-credentials/" }, nil},
	} {
		t.Run(to.name, func(t *testing.T) {
			target := newCounted(t, healthyAnswer)
			src := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, to.url(target.URL), http.StatusTemporaryRedirect)
			})
			w := New(loopbackOK)
			if err := w.Apply(config("cfg", src.URL, caOf(src.Server), 1, allWorkloads)); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			_, _, err := w.InterpretHealth(context.Background(), workload())
			if err == nil || !strings.Contains(err.Error(), "HTTP status 307") || !strings.Contains(err.Error(), "redirects are not followed") {
				t.Errorf("InterpretHealth error = %v; want HTTP status 307, redirects are not followed", err)
			}
			if to.hits != nil {
				if n := to.hits(target); n != 0 {
					t.Errorf("redirect target received %d requests; want 0", n)
				}
			}
		})
	}
}

func TestWebhookDestinationPolicy(t *testing.T) {
	srv := newCounted(t, healthyAnswer)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, u := range []string{srv.URL, "https://localhost:" + itoa(port)} {
		t.Run(u, func(t *testing.T) {
			w := New(Options{}) // the default policy: loopback denied
			if err := w.Apply(config("cfg", u, caOf(srv.Server), 1, allWorkloads)); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			_, ok, err := w.InterpretHealth(context.Background(), workload())
			if !ok || !errors.Is(err, ErrDestinationDenied) {
				t.Fatalf("InterpretHealth = enabled %t, err %v; want ErrDestinationDenied", ok, err)
			}
			if c, h := srv.conns.Load(), srv.hits.Load(); c != 0 || h != 0 {
				t.Errorf("denied webhook accepted %d connections, %d requests; want none", c, h)
			}
		})
	}
	// Allowed explicitly, the same webhook answers.
	w := New(loopbackOK)
	if err := w.Apply(config("cfg", srv.URL, caOf(srv.Server), 1, allWorkloads)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if h, _, err := w.InterpretHealth(context.Background(), workload()); err != nil || !h {
		t.Errorf("InterpretHealth with loopback allowed = %t, %v; want true, nil", h, err)
	}
}

func TestPolicyCheck(t *testing.T) {
	allowMeta := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}
	tests := []struct {
		addr   string
		policy Policy
		denied bool
	}{
		{"127.0.0.1", Policy{}, true},
		{"127.8.9.10", Policy{}, true},
		{"::1", Policy{}, true},
		{"::ffff:127.0.0.1", Policy{}, true},
		{"0.0.0.0", Policy{}, true},
		{"::", Policy{}, true},
		{"169.254.169.254", Policy{}, true},
		{"fe80::1%eth0", Policy{}, true},
		{"fd00:ec2::254", Policy{}, true},
		{"100.100.100.200", Policy{}, true},
		{"64:ff9b::a9fe:a9fe", Policy{}, true}, // NAT64 of 169.254.169.254
		{"10.0.0.1", Policy{}, false},
		{"192.168.1.10", Policy{}, false},
		{"fd12:3456::1", Policy{}, false},
		{"203.0.113.7", Policy{}, false},
		{"169.254.169.254", allowMeta, false},
		{"169.254.0.1", allowMeta, true},
		{"127.0.0.1", loopbackOK.Policy, false},
	}
	for _, tt := range tests {
		err := tt.policy.Check(netip.MustParseAddr(tt.addr))
		if got := errors.Is(err, ErrDestinationDenied); got != tt.denied {
			t.Errorf("Check(%s, allow %v) = %v; want denied %t", tt.addr, tt.policy.Allow, err, tt.denied)
		}
	}
}

func TestWebhookErrorsHideBody(t *testing.T) {
	const secret = "SECRET-aws-credentials-AKIA"
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"error status", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, secret, http.StatusInternalServerError)
		}, "HTTP status 500 Internal Server Error"},
		{"not json", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(secret))
		}, "decode response: invalid JSON"},
		{"wrong type", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"response":"` + secret + `"}`))
		}, "decode response: field response"},
		{"long message", func(w http.ResponseWriter, r *http.Request) {
			var in Context
			_ = decodeJSON(r, &in)
			writeJSON(w, Context{Response: &Response{UID: in.Request.UID,
				Status: &RequestStatus{Code: 500, Message: "\x1b[2J" + strings.Repeat("x", 4096) + secret}}})
		}, "interpretation failed (code 500): ?[2Jxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newCounted(t, tt.handler)
			w := New(loopbackOK)
			if err := w.Apply(config("cfg", srv.URL, caOf(srv.Server), 1, allWorkloads)); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			_, _, err := w.InterpretHealth(context.Background(), workload())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("InterpretHealth error = %v; want %q", err, tt.want)
			}
			if msg := err.Error(); strings.Contains(msg, "SECRET") || len(msg) > 512 {
				t.Errorf("InterpretHealth error (%d bytes) = %.600q; want no body, at most 512 bytes", len(msg), msg)
			}
		})
	}
}

// clock is the breakers' clock in tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestWebhookBreaker(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	srv := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		healthyAnswer(w, r)
	})
	w := New(loopbackOK)
	t.Cleanup(w.Close)
	clk := &clock{t: time.Unix(1e9, 0)}
	w.now = clk.now
	cfg := config("cfg", srv.URL, caOf(srv.Server), 1, allWorkloads)
	if err := w.Apply(cfg); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	ctx := context.Background()
	health := func() error { _, _, err := w.InterpretHealth(ctx, workload()); return err }
	state := func() string { return w.BreakerState("cfg/hook") }
	for i := 0; i < BreakerFailures; i++ {
		if err := health(); err == nil || errors.Is(err, ErrBreakerOpen) {
			t.Fatalf("call %d: error %v; want the webhook's failure", i+1, err)
		}
	}
	// Open: calls fail fast without reaching the webhook, naming it.
	err := health()
	if !errors.Is(err, ErrBreakerOpen) || !strings.Contains(err.Error(), "webhook cfg/hook") ||
		!strings.Contains(err.Error(), "HTTP status 503") {
		t.Fatalf("call after %d failures: %v; want ErrBreakerOpen naming cfg/hook and the last failure", BreakerFailures, err)
	}
	if n := srv.hits.Load(); n != BreakerFailures {
		t.Errorf("webhook received %d requests; want %d (none while open)", n, BreakerFailures)
	}
	if s := state(); s != StateOpen {
		t.Errorf("BreakerState = %q; want open", s)
	}
	// A resync with the same spec keeps the breaker open.
	if err := w.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != StateOpen {
		t.Errorf("BreakerState after resync = %q; want open", s)
	}
	// Half-open after the cool-down: the next call probes in the
	// background and fails at once; the probe's failure reopens.
	clk.advance(BreakerCooldown)
	if s := state(); s != StateHalfOpen {
		t.Errorf("BreakerState after cool-down = %q; want half-open", s)
	}
	if err := health(); !errors.Is(err, ErrBreakerOpen) || !strings.Contains(err.Error(), "probes") {
		t.Fatalf("probing call: %v; want ErrBreakerOpen, probing", err)
	}
	waitFor(t, func() bool { return state() == StateOpen })
	if n := srv.hits.Load(); n != BreakerFailures+1 {
		t.Errorf("webhook received %d requests; want %d", n, BreakerFailures+1)
	}
	// A successful probe closes it.
	failing.Store(false)
	clk.advance(BreakerCooldown)
	if err := health(); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("probing call: %v; want ErrBreakerOpen", err)
	}
	waitFor(t, func() bool { return state() == StateClosed })
	if err := health(); err != nil {
		t.Fatalf("call after a good probe: %v", err)
	}
	// A changed spec starts with a closed breaker.
	failing.Store(true)
	for i := 0; i < BreakerFailures; i++ {
		_ = health()
	}
	if s := state(); s != StateOpen {
		t.Fatalf("BreakerState after %d failures = %q; want open", BreakerFailures, s)
	}
	if err := w.Apply(config("cfg", srv.URL, caOf(srv.Server), 2, allWorkloads)); err != nil {
		t.Fatal(err)
	}
	if s := state(); s != StateClosed {
		t.Errorf("BreakerState after a changed spec = %q; want closed", s)
	}
}

// TestWebhookBreakerSlow: a webhook that never answers costs its timeout
// BreakerFailures times, then no more: calls fail at once while open and
// while the half-open probe waits in the background.
func TestWebhookBreakerSlow(t *testing.T) {
	answer := make(chan struct{})
	srv := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-answer:
			healthyAnswer(w, r)
		case <-r.Context().Done():
		}
	})
	w := New(loopbackOK)
	t.Cleanup(w.Close)
	clk := &clock{t: time.Unix(1e9, 0)}
	w.now = clk.now
	if err := w.Apply(config("cfg", srv.URL, caOf(srv.Server), 1, allWorkloads)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	ctx := context.Background()
	for i := 0; i < BreakerFailures; i++ {
		if _, _, err := w.InterpretHealth(ctx, workload()); err == nil || !strings.Contains(err.Error(), "Client.Timeout exceeded") {
			t.Fatalf("call %d: %v; want a timeout", i+1, err)
		}
	}
	if _, _, err := w.InterpretHealth(ctx, workload()); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("call after %d timeouts: %v; want ErrBreakerOpen", BreakerFailures, err)
	}
	clk.advance(BreakerCooldown)
	if _, _, err := w.InterpretHealth(ctx, workload()); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("probing call: %v; want ErrBreakerOpen at once", err)
	}
	waitFor(t, func() bool { return srv.hits.Load() == BreakerFailures+1 })
	_, _, err := w.InterpretHealth(ctx, workload())
	if !errors.Is(err, ErrBreakerOpen) || !strings.Contains(err.Error(), "in flight") {
		t.Errorf("call during the probe: %v; want ErrBreakerOpen, probe in flight", err)
	}
	close(answer) // the webhook recovers: the waiting probe gets its answer
	waitFor(t, func() bool { return w.BreakerState("cfg/hook") == StateClosed })
	if h, _, err := w.InterpretHealth(ctx, workload()); err != nil || !h {
		t.Errorf("call after the probe = %t, %v; want true, nil", h, err)
	}
	if n := srv.hits.Load(); n != BreakerFailures+2 {
		t.Errorf("webhook received %d requests; want %d", n, BreakerFailures+2)
	}
}

// TestWebhookCloseStopsProbes: Close ends a probe waiting on a silent
// webhook and no probe starts afterwards.
func TestWebhookCloseStopsProbes(t *testing.T) {
	srv := newCounted(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices the client hang up
		<-r.Context().Done()
	})
	w := New(loopbackOK)
	clk := &clock{t: time.Unix(1e9, 0)}
	w.now = clk.now
	if err := w.Apply(config("cfg", srv.URL, caOf(srv.Server), 30, allWorkloads)); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	h := (*w.hooks.Load())[0]
	for i := 0; i < BreakerFailures; i++ {
		h.breaker.done(clk.now(), false, true, errors.New("down"))
	}
	clk.advance(BreakerCooldown)
	if _, _, err := w.InterpretHealth(context.Background(), workload()); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("probing call: %v; want ErrBreakerOpen", err)
	}
	waitFor(t, func() bool { return srv.hits.Load() == 1 })
	w.Close() // returns once the probe, cancelled, has ended
	if s := w.BreakerState("cfg/hook"); s != StateHalfOpen {
		t.Errorf("BreakerState after Close = %q; want half-open (a cancelled probe counts nothing)", s)
	}
	if _, _, err := w.InterpretHealth(context.Background(), workload()); !errors.Is(err, ErrBreakerOpen) ||
		!strings.Contains(err.Error(), "closed") {
		t.Errorf("call after Close: %v; want ErrBreakerOpen, closed", err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("webhook received %d requests; want 1", n)
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func decodeJSON(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }

func writeJSON(w http.ResponseWriter, v any) { _ = json.NewEncoder(w).Encode(v) }

func caOf(s *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

func itoa(n int) string { return strconv.Itoa(n) }
