package syncstate

import (
	"fmt"
	"runtime"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Sizes of BenchmarkSessionMemory: benchSessions agents of benchWorks works
// each, as a scaled-down hub of 1,000 agents with 1,000 works each.
const (
	benchSessions = 200
	benchWorks    = 1000
)

// BenchmarkSessionMemory reports the heap a session keeps per work once it
// has sent every work of its cluster and half of them are acknowledged (a
// rollout in progress). The works are shared by every session, as the hub
// shares them, so only the sessions' own state is counted.
// Run with: go test -run '^$' -bench BenchmarkSessionMemory -count 3 ./hub/syncstate/
func BenchmarkSessionMemory(b *testing.B) {
	works := make([]*agentv1.WorkUpsert, benchWorks)
	for i := range works {
		works[i] = &agentv1.WorkUpsert{WorkKey: fmt.Sprintf("ns%03d/work%04d", i%100, i), Version: "v1"}
	}
	var perWork float64
	for b.Loop() {
		perWork = sessionHeap(works) / (benchSessions * benchWorks)
	}
	b.ReportMetric(perWork, "heap-B/work")
}

// sessionHeap returns the heap bytes held by benchSessions sessions of
// works, each drained and with every other work acknowledged.
func sessionHeap(works []*agentv1.WorkUpsert) float64 {
	before := heapAlloc()
	sessions := make([]*Session, benchSessions)
	for i := range sessions {
		s := New(Input{HubIdentity: "hub-1", Hello: &agentv1.Hello{}, Desired: works})
		for m := s.Next(); m != nil; m = s.Next() {
		}
		for j := 0; j < len(works); j += 2 {
			s.AcceptAck(&agentv1.Ack{WorkKey: works[j].GetWorkKey(), Version: works[j].GetVersion(), Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED})
		}
		sessions[i] = s
	}
	after := heapAlloc()
	runtime.KeepAlive(sessions)
	return float64(after) - float64(before)
}

// heapAlloc returns the bytes of live heap objects after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
