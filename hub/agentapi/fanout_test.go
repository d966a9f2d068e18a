package agentapi_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/pki"
)

// fleet is n test agents connected to one hub, each with a reader that
// reports every version of the work "tmpl" it receives.
type fleet struct {
	h        *hub
	clusters []string
	got      chan string // versions of tmpl received, from every agent
}

// newFleet connects n agents and returns once all have seen SyncDone.
// Their readers exit, and are waited for, when tb ends.
func newFleet(tb testing.TB, n int) *fleet {
	tb.Helper()
	f := &fleet{h: startHub(tb, agentapi.Config{}), got: make(chan string, n)}
	for i := range n {
		f.clusters = append(f.clusters, fmt.Sprintf("edge-%04d", i))
	}
	f.h.works.Set(f.clusters, work("tmpl", "0"))
	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	tb.Cleanup(func() {
		cancel()
		readers.Wait()
	})
	synced := make(chan error, n)
	for _, cluster := range f.clusters {
		conn := f.h.dial(tb, &pki.Identity{Name: cluster, Kind: pki.KindAgent})
		stream, err := agentv1.NewAgentServiceClient(conn).Connect(ctx)
		if err != nil {
			tb.Fatalf("Connect %s: %v", cluster, err)
		}
		if err := stream.Send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Hello{Hello: &agentv1.Hello{}}}); err != nil {
			tb.Fatalf("Hello %s: %v", cluster, err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			f.read(stream, synced)
		}()
	}
	for range n {
		if err := <-synced; err != nil {
			tb.Fatalf("initial sync: %v", err)
		}
	}
	return f
}

// read receives until the stream ends: SyncDone goes to synced, versions of
// tmpl after it to f.got.
func (f *fleet) read(stream agentv1.AgentService_ConnectClient, synced chan<- error) {
	for {
		m, err := stream.Recv()
		if err != nil {
			synced <- err // only read before SyncDone; buffered for all
			return
		}
		switch {
		case m.GetSyncDone() != nil:
			synced <- nil
		case m.GetWorkUpsert().GetWorkKey() == "tmpl" && m.GetWorkUpsert().GetVersion() != "0":
			f.got <- m.GetWorkUpsert().GetVersion()
		}
	}
}

// change sets tmpl to version v for every cluster, as one template change
// would, and waits until every agent received it.
func (f *fleet) change(tb testing.TB, v int) {
	version := strconv.Itoa(v)
	f.h.works.Set(f.clusters, work("tmpl", version))
	timeout := time.After(time.Minute)
	for i := range f.clusters {
		select {
		case got := <-f.got:
			if got != version {
				tb.Fatalf("agent received tmpl@%s; want @%s", got, version)
			}
		case <-timeout:
			tb.Fatalf("after a minute %d of %d agents received tmpl@%s", i, len(f.clusters), version)
		}
	}
}

func TestFanOutReachesEveryAgent(t *testing.T) {
	f := newFleet(t, 100)
	for v := 1; v <= 3; v++ {
		f.change(t, v)
	}
	if n := f.h.srv.Streams(); n != 100 {
		t.Errorf("Streams = %d; want 100", n)
	}
}

// BenchmarkFanOut1000Agents measures one template change that affects 1,000
// connected agents: from the change until every agent received its upsert.
func BenchmarkFanOut1000Agents(b *testing.B) {
	const agents = 1000
	f := newFleet(b, agents)
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		f.change(b, i)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*agents), "ns/agent")
}
