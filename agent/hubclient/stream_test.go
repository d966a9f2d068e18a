package hubclient_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

const (
	hubA = "hub-a"
	hubB = "hub-b"
	beat = 50 * time.Millisecond
	del  = agentv1.DeletionPolicy_DELETION_POLICY_DELETE
)

// agent is one client instance under test.
type agent struct {
	applier *hubtest.Applier
	status  *hubtest.Status
	cancel  context.CancelFunc
	done    chan error
	stopped sync.Once
	backoff atomic.Int64 // calls of Backoff
}

type option func(*hubclient.Config)

func withGrace(d time.Duration) option { return func(c *hubclient.Config) { c.EvictionGrace = d } }

// startAgent runs a client on dir against addr until stop or the test ends.
func startAgent(t *testing.T, certs *hubtest.Certs, addr, dir string, opts ...option) *agent {
	t.Helper()
	a := &agent{applier: hubtest.NewApplier(), status: hubtest.NewStatus(), done: make(chan error, 1)}
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := hubclient.Config{
		Addrs: []string{addr}, TLS: certs.ClientTLS(t), AgentVersion: "v-test", Store: store,
		Applier: a.applier, Status: a.status,
		Backoff: func(int) time.Duration { a.backoff.Add(1); return 20 * time.Millisecond },
	}
	for _, o := range opts {
		o(&cfg)
	}
	c, err := hubclient.New(cfg, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	go func() { a.done <- c.Run(ctx) }()
	t.Cleanup(func() { a.stop(t) })
	return a
}

// stop ends Run and waits for it.
func (a *agent) stop(t *testing.T) {
	t.Helper()
	a.stopped.Do(func() {
		a.cancel()
		select {
		case err := <-a.done:
			if err != nil {
				t.Errorf("Run() = %v; want nil after cancel", err)
			}
		case <-time.After(hubtest.Timeout):
			t.Fatalf("Run did not return within %s of cancel", hubtest.Timeout)
		}
	})
}

func (a *agent) waitFor(t *testing.T, c hubtest.Call) {
	t.Helper()
	if err := a.applier.WaitFor(c); err != nil {
		t.Fatal(err)
	}
}

func ackOf(key string) func(*agentv1.AgentMessage) bool {
	return func(m *agentv1.AgentMessage) bool { return m.GetAck().GetWorkKey() == key }
}

func apply(key, version string) hubtest.Call {
	return hubtest.Call{Op: "apply", Key: key, Version: version}
}

// syncFirst runs a first stream from hubA giving works a and b at v1 and
// waits for both acks.
func syncFirst(t *testing.T, s *hubtest.Stream) {
	t.Helper()
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.Upsert("a", "v1"), hubtest.Upsert("b", "v1"), hubtest.SyncDone(2))
	for _, k := range []string{"a", "b"} {
		ack := s.Recv(t, ackOf(k)).GetAck()
		if ack.GetVersion() != "v1" || ack.GetResult() != agentv1.ApplyResult_APPLY_RESULT_APPLIED {
			t.Errorf("ack of %s = %v; want v1 APPLIED", k, ack)
		}
	}
}

func TestFirstSync(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	a := startAgent(t, certs, hub.Addr, t.TempDir())
	s := hub.Next(t)
	if h := s.Hello(); h == nil || h.GetLastHubIdentity() != "" || len(h.GetHeldWorks()) != 0 || h.GetAgentVersion() != "v-test" {
		t.Fatalf("first message = %v; want an empty Hello of version v-test", s.First)
	}
	syncFirst(t, s)
	if hb := s.Recv(t, hubtest.Heartbeats).GetHeartbeat(); hb.GetAgentVersion() != "v-test" {
		t.Errorf("heartbeat = %v; want agent version v-test", hb)
	}
	a.status.Push("a", "v1", "d1")
	if r := s.Recv(t, hubtest.Reports).GetStatusReport(); r.GetDigest() != "d1" {
		t.Errorf("status report = %v; want a's with digest d1", r)
	}
	s.Send(t, hubtest.StatusRequest("b"))
	select {
	case keys := <-a.status.Resends:
		if len(keys) != 1 || keys[0] != "b" {
			t.Errorf("Resend(%v); want [b]", keys)
		}
	case <-time.After(hubtest.Timeout):
		t.Fatal("StatusRequest did not reach the status source")
	}
}

func TestRestartWithoutHub(t *testing.T) {
	certs := hubtest.NewCerts(t)
	dir := t.TempDir()
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	first := startAgent(t, certs, hub.Addr, dir)
	s := hub.Next(t)
	syncFirst(t, s)
	first.status.Push("a", "v1", "d1")
	s.Recv(t, hubtest.Reports)
	first.stop(t)
	hub.Stop()

	// A new agent on the same data directory, the hub unreachable: it
	// applies what it holds.
	second := startAgent(t, certs, hub.Addr, dir)
	second.waitFor(t, apply("a", "v1"))
	second.waitFor(t, apply("b", "v1"))

	// The hub comes back: Hello carries what the agent holds.
	hub = hubtest.Start(t, certs, hub.Addr)
	h := hub.Next(t).Hello()
	if h.GetLastHubIdentity() != hubA || len(h.GetHeldWorks()) != 2 ||
		h.GetHeldWorks()[0].GetVersion() != "v1" || len(h.GetReportedStatuses()) != 1 ||
		h.GetReportedStatuses()[0].GetStatusDigest() != "d1" {
		t.Errorf("Hello after a restart = %v; want hub-a, a@v1 and b@v1, a's digest d1", h)
	}
}

func TestReconnectAfterHubGoesAway(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	a := startAgent(t, certs, hub.Addr, t.TempDir())
	syncFirst(t, hub.Next(t))
	hub.Stop()
	hub = hubtest.Start(t, certs, hub.Addr)
	s := hub.Next(t)
	if h := s.Hello(); h.GetLastHubIdentity() != hubA || len(h.GetHeldWorks()) != 2 {
		t.Errorf("Hello after reconnecting = %v; want hub-a with a and b", h)
	}
	if n := a.backoff.Load(); n < 1 {
		t.Errorf("Backoff called %d times before reconnecting; want at least once", n)
	}
	// The new stream works: a new version is applied and acknowledged.
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.Upsert("a", "v2"), hubtest.SyncDone(2))
	if ack := s.Recv(t, ackOf("a")).GetAck(); ack.GetVersion() != "v2" {
		t.Errorf("ack = %v; want a@v2", ack)
	}
}

func TestDeletesWaitForSyncDone(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	a := startAgent(t, certs, hub.Addr, t.TempDir())
	s := hub.Next(t)
	syncFirst(t, s)
	s.Close(nil)

	// A delete before SyncDone, then the stream ends: nothing is deleted.
	s = hub.Next(t)
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.Delete("a", del), hubtest.Upsert("c", "v1"))
	s.Recv(t, ackOf("c"))
	s.Close(nil)
	s = hub.Next(t)
	if h := s.Hello(); len(h.GetHeldWorks()) != 3 {
		t.Errorf("Hello after an unsynced delete = %v; want a, b and c still held", h)
	}
	noDeletes(t, a)

	// The same delete with SyncDone after it is carried out.
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.Delete("a", del), hubtest.SyncDone(2))
	a.waitFor(t, hubtest.Call{Op: "delete", Key: "a", Version: "v1", Policy: del, Reason: agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED})
	if ack := s.Recv(t, ackOf("a")).GetAck(); ack.GetResult() != agentv1.ApplyResult_APPLY_RESULT_DELETED {
		t.Errorf("ack of the delete = %v; want DELETED", ack)
	}
}

func TestAnotherHubNeverDeletes(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	a := startAgent(t, certs, hub.Addr, t.TempDir())
	s := hub.Next(t)
	syncFirst(t, s)
	s.Close(nil)

	s = hub.Next(t)
	s.Send(t, hubtest.Welcome(hubB, beat), hubtest.Delete("a", del), hubtest.Upsert("b", "v1"),
		hubtest.SyncDone(1), hubtest.Delete("a", del), hubtest.Upsert("c", "v1"))
	s.Recv(t, ackOf("c"))
	noDeletes(t, a)
	s.Close(nil)
	if h := hub.Next(t).Hello(); h.GetLastHubIdentity() != hubA || len(h.GetHeldWorks()) != 2 {
		t.Errorf("Hello = %v; want hub-a with a and b (c came from a hub this agent does not trust)", h)
	}
}

// TestAdoptionKeepsUnknownWorksUnmanaged: a hub of another identity
// changes nothing the agent holds; once its Welcome carries an adoption
// naming the agent's hub identity, it claims what it sends, and the work
// it does not have stays, unmanaged: never deleted, also past the grace
// period, and named in the heartbeat's condition.
func TestAdoptionKeepsUnknownWorksUnmanaged(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	a := startAgent(t, certs, hub.Addr, t.TempDir(), withGrace(100*time.Millisecond))
	s := hub.Next(t)
	syncFirst(t, s)
	s.Close(nil)
	s = hub.Next(t)
	s.Send(t, hubtest.Welcome(hubB, beat), hubtest.Upsert("b", "v2"), hubtest.SyncDoneKeys("b"))
	refused := s.Recv(t, ackOf("b")).GetAck()
	if refused.GetResult() != agentv1.ApplyResult_APPLY_RESULT_FAILED || !strings.Contains(refused.GetMessage(), "not authoritative") {
		t.Errorf("ack of b@v2 from a hub of another identity = %v; want FAILED, saying the hub is not authoritative for the agent", refused)
	}
	s.Recv(t, func(m *agentv1.AgentMessage) bool {
		return heartbeatNames(m.GetHeartbeat(), hubclient.ConditionHubTrusted, "hub identity hub-b is not hub-a")
	})
	s.Close(nil)
	s = hub.Next(t)
	w := hubtest.Welcome(hubB, beat)
	w.GetWelcome().Adoption = &agentv1.Adoption{Id: "ad1", Identities: []string{hubA, hubB}}
	s.Send(t, w, hubtest.Upsert("b", "v1"), hubtest.SyncDoneKeys("b"))
	s.Recv(t, func(m *agentv1.AgentMessage) bool { // fails the test if none comes
		return heartbeatNames(m.GetHeartbeat(), hubclient.ConditionUnmanagedWorks, "[a]")
	})
	time.Sleep(500 * time.Millisecond) // five grace periods, watching for a delete
	noDeletes(t, a)
	s.Close(nil)
	if h := hub.Next(t).Hello(); h.GetLastHubIdentity() != hubB || len(h.GetHeldWorks()) != 1 || h.GetLastAdoptionId() != "ad1" {
		t.Errorf("Hello = %v; want hub-b holding b alone (a unmanaged), adoption ad1 seen", h)
	}
}

func heartbeatNames(hb *agentv1.Heartbeat, typ, msg string) bool {
	for _, c := range hb.GetConditions() {
		if c.GetType() == typ && strings.Contains(c.GetMessage(), msg) {
			return true
		}
	}
	return false
}

// TestUnvouchedHubStartsNoOrphaning: a hub with a new identity that is not
// authoritative (its store was wiped and no operator accepted it) makes the
// agent orphan nothing, so nothing is evicted after the grace period.
func TestUnvouchedHubStartsNoOrphaning(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	a := startAgent(t, certs, hub.Addr, t.TempDir(), withGrace(100*time.Millisecond))
	s := hub.Next(t)
	syncFirst(t, s)
	s.Close(nil)
	s = hub.Next(t)
	s.Send(t, hubtest.Welcome(hubB, beat), hubtest.SyncDone(0))
	// The agent reports in after SyncDone; past several grace periods
	// nothing may have been deleted.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		for _, c := range a.applier.Calls() {
			if c.Op == "delete" {
				t.Fatalf("call %+v after a SyncDone that is not authoritative; want no delete", c)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestGoodbyeClusterRemovedEndsRun(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	a := startAgent(t, certs, hub.Addr, t.TempDir())
	s := hub.Next(t)
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.Goodbye(agentv1.DisconnectReason_DISCONNECT_REASON_CLUSTER_REMOVED, 0))
	select {
	case err := <-a.done:
		a.done <- nil // for stop
		if !errors.Is(err, hubclient.ErrClusterRemoved) {
			t.Errorf("Run() = %v; want ErrClusterRemoved", err)
		}
	case <-time.After(hubtest.Timeout):
		t.Fatal("Run did not end after Goodbye CLUSTER_REMOVED")
	}
}

func TestCorruptStateIsAClearError(t *testing.T) {
	certs := hubtest.NewCerts(t)
	dir := t.TempDir()
	store, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(store.Dir(), "hub.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = hubclient.New(hubclient.Config{Addrs: []string{"127.0.0.1:1"}, TLS: certs.ClientTLS(t), Store: store,
		Applier: hubtest.NewApplier()}, hclog.NewNullLogger())
	if !errors.Is(err, state.ErrCorrupt) {
		t.Fatalf("New() on a corrupt state = %v; want state.ErrCorrupt", err)
	}
}

func noDeletes(t *testing.T, a *agent) {
	t.Helper()
	for _, c := range a.applier.Calls() {
		if c.Op == "delete" {
			t.Errorf("call %+v; want no deletion", c)
		}
	}
}

// TestHubKeySetDeletesWhatWasRemovedWhileAway: a work the hub removed
// while the agent was away, and no longer remembers, is deleted when the
// agent returns: the hub's authoritative SyncDone does not list it.
func TestHubKeySetDeletesWhatWasRemovedWhileAway(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	a := startAgent(t, certs, hub.Addr, t.TempDir())
	s := hub.Next(t)
	syncFirst(t, s)
	s.Close(nil)

	s = hub.Next(t)
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.SyncDoneKeys("b"))
	a.waitFor(t, hubtest.Call{Op: "delete", Key: "a", Version: "v1", Policy: del, Reason: agentv1.DeleteReason_DELETE_REASON_NOT_IN_HUB_SET})
	if ack := s.Recv(t, ackOf("a")).GetAck(); ack.GetResult() != agentv1.ApplyResult_APPLY_RESULT_DELETED {
		t.Errorf("ack of a = %v; want DELETED", ack)
	}
	for _, c := range a.applier.Calls() {
		if c.Op == "delete" && c.Key != "a" {
			t.Errorf("call %+v; want only a deleted", c)
		}
	}
}

// TestPendingDeletionResumesAfterRestart: an agent that stops in the
// middle of a deletion finishes it after a restart (the hub unreachable),
// and never applies the work again.
func TestPendingDeletionResumesAfterRestart(t *testing.T) {
	certs := hubtest.NewCerts(t)
	dir := t.TempDir()
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	first := startAgent(t, certs, hub.Addr, dir)
	s := hub.Next(t)
	syncFirst(t, s)
	first.applier.HangDeletes()
	s.Send(t, &agentv1.HubMessage{Message: &agentv1.HubMessage_WorkDelete{WorkDelete: &agentv1.WorkDelete{
		WorkKey: "a", DeletionPolicy: del, Reason: agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED}}})
	want := hubtest.Call{Op: "delete", Key: "a", Version: "v1", Policy: del, Reason: agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED}
	first.waitFor(t, want)
	first.stop(t) // the deletion is cut short
	hub.Stop()

	second := startAgent(t, certs, hub.Addr, dir)
	second.waitFor(t, want)
	second.waitFor(t, apply("b", "v1"))
	for _, c := range second.applier.Calls() {
		if c.Op == "apply" && c.Key == "a" {
			t.Errorf("call %+v after a restart in the middle of a's deletion; want a deleted, never applied again", c)
		}
	}
}
