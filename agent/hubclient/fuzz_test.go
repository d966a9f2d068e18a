package hubclient

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tetherproj/tether/agent/customizations"
	"github.com/tetherproj/tether/agent/hubclient/hubtest"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/fuzzframe"
	"github.com/tetherproj/tether/internal/interpreter"
)

// Hub identities of the fuzzed stream: the state holds works "a" and "b"
// from fuzzHubA; a Welcome may come from either.
const (
	fuzzHubA = "hub-a"
	fuzzHubB = "hub-b"
)

// FuzzHandle feeds arbitrary hub messages to the agent's handling of one
// stream (conn.handle with the real Books and customizations loader; the
// stream and the state are in memory): the input is a
// sequence of 2-byte big-endian lengths, each followed by that many bytes
// unmarshalled as a HubMessage (bytes that do not unmarshal are skipped,
// as gRPC refuses them). Whatever arrives, handling returns (an error ends
// the stream), and:
//   - a deletion is decided only for a work of the hub that welcomed the
//     stream, after that hub's SyncDone on it, and for a work the hub did
//     not list only after an authoritative one (DESIGN §4, deletion
//     safety);
//   - nothing sent is larger than the hub's max_message_bytes.
//
// Run with: go test -run '^$' -fuzz FuzzHandle -fuzztime 1m ./agent/hubclient/
func FuzzHandle(f *testing.F) {
	for _, seq := range fuzzHubSeeds() {
		f.Add(fuzzframe.Encode(seq...))
	}
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(interp.Close)
	seed := fuzzState(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := fuzzClient(t, seed, customizations.New(interp, customizations.WebhookPolicy{}, hclog.NewNullLogger()))
		s := &conn{c: c, stream: &fuzzStream{}, heartbeat: make(chan beatSettings, 1)}
		c.mu.Lock()
		c.books.Hello("v-fuzz")
		c.mu.Unlock()
		defer c.endStream()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var welcomed string
		synced, authoritative := false, false
		for _, msg := range fuzzframe.Decode[agentv1.HubMessage](data) {
			err := s.handle(ctx, msg)
			if w := msg.GetWelcome(); w != nil && welcomed == "" && err == nil {
				welcomed = w.GetHubIdentity()
			}
			if msg.GetSyncDone() != nil && err == nil && welcomed != "" {
				synced = true
				authoritative = authoritative || msg.GetSyncDone().GetAuthoritative()
			}
			checkDeletions(t, c, welcomed, synced, authoritative)
			checkSizes(t, s)
			if err != nil {
				break
			}
		}
	})
}

// checkDeletions: every deletion queued is of a work of the welcoming hub,
// after its SyncDone; one of a work the hub did not list, after an
// authoritative one.
func checkDeletions(t *testing.T, c *Client, welcomed string, synced, authoritative bool) {
	t.Helper()
	c.queue.mu.Lock()
	defer c.queue.mu.Unlock()
	for key, e := range c.queue.waiting {
		d := e.t.deletion
		if d == nil {
			continue
		}
		notListed := d.Reason == agentv1.DeleteReason_DELETE_REASON_NOT_IN_HUB_SET
		if !synced || d.Hub != welcomed || d.Evicted || (notListed && !authoritative) {
			t.Fatalf("deletion of %s decided (%+v); welcomed by %q, synced %v, authoritative %v", key, d.Removal, welcomed, synced, authoritative)
		}
	}
}

// checkSizes: nothing sent is over the limit of the Settings in force.
func checkSizes(t *testing.T, s *conn) {
	t.Helper()
	st := s.stream.(*fuzzStream)
	for _, m := range st.sent {
		if limit := s.c.maxMessageBytes; limit > 0 && int64(proto.Size(m)) > limit {
			t.Fatalf("sent %d bytes (%T); the hub's limit is %d", proto.Size(m), m.GetMessage(), limit)
		}
	}
	st.sent = st.sent[:0]
}

// fuzzClient is a client whose state (in memory: the handling does no
// state I/O, the workers do) holds works a and b from fuzzHubA.
func fuzzClient(t *testing.T, seed *memBackend, loader Customizations) *Client {
	t.Helper()
	c, err := New(Config{
		Addrs: []string{"127.0.0.1:1"}, TLS: &tls.Config{}, AgentVersion: "v-fuzz", Store: state.New(seed.clone()),
		Applier: hubtest.NewApplier(), Customizations: loader,
	}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.conn.Close() })
	return c
}

// fuzzState is the state FuzzHandle starts from.
func fuzzState(f *testing.F) *memBackend {
	b := &memBackend{blobs: map[string][]byte{}}
	store := state.New(b)
	ctx := context.Background()
	if err := store.PutHub(ctx, fuzzHubA, state.Lineage{}); err != nil {
		f.Fatal(err)
	}
	for _, key := range []string{"a", "b"} {
		w := state.Work{Key: key, Version: "1", Manifests: [][]byte{[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + key + `"}}`)}}
		if err := store.PutWork(ctx, state.Held{Work: w, Hub: fuzzHubA}); err != nil {
			f.Fatal(err)
		}
	}
	return b
}

// memBackend keeps the state's blobs in memory; the Store serializes its
// calls.
type memBackend struct{ blobs map[string][]byte }

func (b *memBackend) clone() *memBackend {
	out := &memBackend{blobs: make(map[string][]byte, len(b.blobs))}
	for k, v := range b.blobs {
		out.blobs[k] = v
	}
	return out
}

func (b *memBackend) ReadAll(context.Context) (map[string][]byte, error) { return b.clone().blobs, nil }

func (b *memBackend) Write(_ context.Context, name string, data []byte) error {
	b.blobs[name] = data
	return nil
}

func (b *memBackend) Delete(_ context.Context, name string) error {
	delete(b.blobs, name)
	return nil
}

func (b *memBackend) Where(name string) string { return "memory:" + name }

// fuzzStream is the agent's end of a stream in memory: Send records.
type fuzzStream struct {
	grpc.ClientStream
	sent []*agentv1.AgentMessage // only the fuzzed goroutine uses it
}

func (s *fuzzStream) Send(m *agentv1.AgentMessage) error {
	s.sent = append(s.sent, m)
	return nil
}

func (s *fuzzStream) Recv() (*agentv1.HubMessage, error) {
	return nil, errors.New("fuzzStream: no Recv")
}

func (s *fuzzStream) Context() context.Context { return context.Background() }

// fuzzHubSeeds are sequences of every HubMessage kind.
func fuzzHubSeeds() [][]*agentv1.HubMessage {
	welcome := func(id string, limit int64) *agentv1.HubMessage {
		return &agentv1.HubMessage{Message: &agentv1.HubMessage_Welcome{Welcome: &agentv1.Welcome{
			HubIdentity: id, HubVersion: "fuzz",
			Settings: &agentv1.Settings{HeartbeatInterval: durationpb.New(time.Second), Limits: &agentv1.Limits{MaxMessageBytes: limit}},
		}}}
	}
	upsert := hubtest.Upsert
	del := func(key string) *agentv1.HubMessage {
		return hubtest.Delete(key, agentv1.DeletionPolicy_DELETION_POLICY_DELETE)
	}
	settings := &agentv1.HubMessage{Message: &agentv1.HubMessage_Settings{Settings: &agentv1.Settings{
		HeartbeatInterval: durationpb.New(time.Millisecond), Limits: &agentv1.Limits{MaxMessageBytes: 40},
		ResourceModels: []*agentv1.ResourceModel{{Grade: 0}},
	}}}
	lua := &agentv1.HubMessage{Message: &agentv1.HubMessage_Customizations{Customizations: &agentv1.Customizations{
		Version: "c1",
		ResourceInterpreterCustomizations: [][]byte{[]byte(`{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization",` +
			`"metadata":{"name":"r"},"spec":{"target":{"apiVersion":"v1","kind":"ConfigMap"},` +
			`"customizations":{"healthInterpretation":{"luaScript":"function InterpretHealth(o) return true end"}}}}`)},
	}}}
	junk := &agentv1.HubMessage{Message: &agentv1.HubMessage_Customizations{Customizations: &agentv1.Customizations{
		Version: "c2", ResourceInterpreterCustomizations: [][]byte{[]byte(`{`)}, WebhookConfigurations: [][]byte{[]byte(`[]`)},
	}}}
	bye := func(r agentv1.DisconnectReason) *agentv1.HubMessage { return hubtest.Goodbye(r, time.Second) }
	return [][]*agentv1.HubMessage{
		{},
		{welcome(fuzzHubA, 0), upsert("a", "2"), hubtest.SyncDoneKeys("a"), del("a"), hubtest.StatusRequest("a")},
		{welcome(fuzzHubB, 0), del("a"), hubtest.SyncDone(0), del("b")},
		{del("a"), welcome(fuzzHubA, 0), hubtest.SyncDone(2), welcome(fuzzHubA, 0)},
		{welcome(fuzzHubA, 64), settings, lua, junk, hubtest.Renewed(nil, "refused")},
		{welcome(fuzzHubA, 0), hubtest.SyncDone(1), bye(agentv1.DisconnectReason_DISCONNECT_REASON_SHUTDOWN)},
		{welcome(fuzzHubA, 0), bye(agentv1.DisconnectReason_DISCONNECT_REASON_CLUSTER_REMOVED)},
		{{}},
	}
}
