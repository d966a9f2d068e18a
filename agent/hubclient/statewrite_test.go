package hubclient_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// gatedBackend keeps the state in memory; every write waits until the gate
// is opened (a member API server that stopped answering).
type gatedBackend struct {
	started chan struct{} // closed when the first write began to wait
	gate    chan struct{} // closed to let writes through
	once    sync.Once

	mu    sync.Mutex // guards blobs
	blobs map[string][]byte
}

func newGatedBackend() *gatedBackend {
	return &gatedBackend{started: make(chan struct{}), gate: make(chan struct{}), blobs: map[string][]byte{}}
}

func (b *gatedBackend) open() {
	select {
	case <-b.gate:
	default:
		close(b.gate)
	}
}

func (b *gatedBackend) ReadAll(context.Context) (map[string][]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string][]byte, len(b.blobs))
	for k, v := range b.blobs {
		out[k] = v
	}
	return out, nil
}

func (b *gatedBackend) Write(ctx context.Context, name string, data []byte) error {
	b.once.Do(func() { close(b.started) })
	select {
	case <-b.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blobs[name] = data
	return nil
}

func (b *gatedBackend) Delete(_ context.Context, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.blobs, name)
	return nil
}

func (b *gatedBackend) Where(name string) string { return "memory:" + name }

// TestBlockedStateWriteDoesNotBlockTheStream: while the state cannot be
// written (its writes hang, as a Secret's do when the member API server
// stops answering), the stream goes on: heartbeats flow and hub messages
// are handled; the work whose record is not written yet is not applied,
// and is applied and acknowledged once the write goes through. The state
// writes used to run on the stream's goroutine under the client's lock.
func TestBlockedStateWriteDoesNotBlockTheStream(t *testing.T) {
	certs := hubtest.NewCerts(t)
	hub := hubtest.Start(t, certs, "127.0.0.1:0")
	backend := newGatedBackend()
	a := startAgent(t, certs, hub.Addr, t.TempDir(), func(c *hubclient.Config) { c.Store = state.New(backend) })
	t.Cleanup(backend.open) // before the agent stops
	s := hub.Next(t)
	s.Send(t, hubtest.Welcome(hubA, beat), hubtest.Upsert("a", "v1"), hubtest.SyncDone(1))
	<-backend.started

	s.Recv(t, hubtest.Heartbeats)
	s.Send(t, hubtest.StatusRequest("a"))
	select {
	case keys := <-a.status.Resends:
		if len(keys) != 1 || keys[0] != "a" {
			t.Errorf("Resend(%v); want [a]", keys)
		}
	case <-time.After(hubtest.Timeout):
		t.Fatalf("StatusRequest not handled within %s while a state write hangs", hubtest.Timeout)
	}
	s.Recv(t, hubtest.Heartbeats)
	for _, c := range a.applier.Calls() {
		t.Errorf("call %+v while the work's record is not written; want none", c)
	}

	backend.open()
	a.waitFor(t, apply("a", "v1"))
	if ack := s.Recv(t, ackOf("a")).GetAck(); ack.GetResult() != agentv1.ApplyResult_APPLY_RESULT_APPLIED {
		t.Errorf("ack of a = %v; want APPLIED once its record is written", ack)
	}
}
