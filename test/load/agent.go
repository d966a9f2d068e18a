package load

import (
	"context"
	"crypto/tls"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/tetherproj/tether/agent/hubclient"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// servedAPIs are the kinds a simulated member serves, reported in its
// heartbeats so that the scheduler places the driver's templates there.
var servedAPIs = []*agentv1.APIEnablement{
	{GroupVersion: "v1", Resources: []*agentv1.APIResource{
		{Name: "configmaps", Kind: "ConfigMap", Namespaced: true}, {Name: "namespaces", Kind: "Namespace"},
	}},
	{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true}}},
}

// simAgent is one simulated agent: the real agent/hubclient over TLS with
// an in-memory state and member. Its state outlives its client, so a
// restarted client says in Hello what it holds, like a restarted agent.
type simAgent struct {
	index  int
	name   string
	addrs  []string
	tls    *tls.Config
	store  *state.Store
	member *member
	log    hclog.Logger
	emit   func(Event)
	totals *totals

	// upserts and upsertBytes count the WorkUpserts received on the
	// current stream (reset when one opens), for the sync event.
	upserts, upsertBytes atomic.Int64

	mu     sync.Mutex    // guards cancel and done
	cancel func()        // ends the running client; nil when none runs
	done   chan struct{} // closed when the running client has returned
}

func newSimAgent(index int, name string, addrs []string, tlsCfg *tls.Config, emit func(Event), t *totals, log hclog.Logger) *simAgent {
	a := &simAgent{index: index, name: name, addrs: addrs, tls: tlsCfg, emit: emit, totals: t, log: log}
	a.forget()
	return a
}

// forget gives a stopped agent an empty state and member: a reinstalled
// agent, which holds nothing.
func (a *simAgent) forget() {
	a.store = state.New(newMemBackend())
	a.member = newMember(func(gen int, at time.Time) {
		a.emit(Event{Kind: EventGen, Agent: a.index, Gen: gen, At: at.UnixNano()})
	})
}

// start runs a new client after delay, unless ctx ends first.
func (a *simAgent) start(ctx context.Context, delay time.Duration) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	a.mu.Lock()
	a.cancel, a.done = cancel, done
	a.mu.Unlock()
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		if err := a.run(ctx); err != nil && ctx.Err() == nil {
			a.log.Error("agent ended", "cluster", a.name, "error", err)
			a.emit(Event{Kind: EventError, Agent: a.index, Message: err.Error()})
		}
	}()
}

// stop ends the running client and waits for it.
func (a *simAgent) stop() {
	a.mu.Lock()
	cancel, done := a.cancel, a.done
	a.cancel, a.done = nil, nil
	a.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// run is one client's life: New (which reloads the state) and Run.
func (a *simAgent) run(ctx context.Context) error {
	c, err := hubclient.New(hubclient.Config{
		Addrs: a.addrs, TLS: a.tls, AgentVersion: "tether-load", Store: a.store,
		Applier: a.member, Status: a.member, Capacity: capacity{},
		DialOptions: []grpc.DialOption{grpc.WithStreamInterceptor(a.intercept)},
	}, a.log)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	pumpCtx, stopPump := context.WithCancel(ctx)
	wg.Add(1)
	go func() { defer wg.Done(); a.member.pump(pumpCtx) }()
	err = c.Run(ctx)
	stopPump()
	wg.Wait()
	return err
}

// intercept wraps the agent's stream to count what the hub sends.
func (a *simAgent) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	a.upserts.Store(0)
	a.upsertBytes.Store(0)
	return &countingStream{ClientStream: cs, a: a}, nil
}

// countingStream counts the upserts a stream receives and reports its
// SyncDone with them.
type countingStream struct {
	grpc.ClientStream
	a      *simAgent
	synced bool
}

func (s *countingStream) RecvMsg(m any) error {
	if err := s.ClientStream.RecvMsg(m); err != nil {
		return err
	}
	msg, ok := m.(*agentv1.HubMessage)
	if !ok {
		return nil
	}
	switch {
	case msg.GetWorkUpsert() != nil:
		n := int64(proto.Size(msg.GetWorkUpsert()))
		s.a.upserts.Add(1)
		s.a.upsertBytes.Add(n)
		if s.synced {
			s.a.totals.laterUpserts.Add(1)
			s.a.totals.laterBytes.Add(n)
		}
	case msg.GetSyncDone() != nil && !s.synced:
		s.synced = true
		s.a.emit(Event{Kind: EventSync, Agent: s.a.index, At: time.Now().UnixNano(),
			Upserts: s.a.upserts.Load(), Bytes: s.a.upsertBytes.Load()})
	}
	return nil
}

// totals are a worker's counts over its agents.
type totals struct {
	// laterUpserts and laterBytes: upserts received after a stream's
	// SyncDone (changes as they happen).
	laterUpserts, laterBytes atomic.Int64
}

// capacity is a simulated member's heartbeat (hubclient.CapacitySource):
// Ready, serving servedAPIs, with one node's worth of capacity.
type capacity struct{}

func (capacity) Heartbeat(context.Context, []*agentv1.ResourceModel) (*agentv1.Heartbeat, error) {
	return &agentv1.Heartbeat{
		KubernetesVersion: "v1.34.4",
		Conditions:        []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
		ApiEnablements:    servedAPIs,
		ResourceSummary: &agentv1.ResourceSummary{
			Allocatable: map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"},
		},
	}, nil
}
