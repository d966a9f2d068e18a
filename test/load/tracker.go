package load

import (
	"sync"
	"time"
)

// tracker holds what the workers reported, per agent.
type tracker struct {
	mu sync.Mutex // guards the fields below
	// syncs is each agent's latest SyncDone.
	syncs map[int]Event
	// gens is, per generation, when each agent reached it.
	gens map[int]map[int]int64
	// stats are the workers' latest EventStats, by worker.
	stats map[int]Event
	// errors are the agents' errors, the first few.
	errors []string
}

// maxErrors is how many agent errors the tracker keeps.
const maxErrors = 20

func newTracker() *tracker {
	return &tracker{syncs: map[int]Event{}, gens: map[int]map[int]int64{}, stats: map[int]Event{}}
}

func (t *tracker) record(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case EventSync:
		t.syncs[e.Agent] = e
	case EventGen:
		m := t.gens[e.Gen]
		if m == nil {
			m = map[int]int64{}
			t.gens[e.Gen] = m
		}
		if _, ok := m[e.Agent]; !ok {
			m[e.Agent] = e.At
		}
	case EventStats:
		t.stats[e.Worker] = e
	case EventError:
		if len(t.errors) < maxErrors {
			t.errors = append(t.errors, e.Message)
		}
	}
}

// syncedSince returns the latest SyncDone of every agent synced at or
// after since.
func (t *tracker) syncedSince(since time.Time) []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Event
	for _, e := range t.syncs {
		if e.At >= since.UnixNano() {
			out = append(out, e)
		}
	}
	return out
}

// reached returns when each agent reached gen.
func (t *tracker) reached(gen int) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]int64, 0, len(t.gens[gen]))
	for _, at := range t.gens[gen] {
		out = append(out, at)
	}
	return out
}

// statsCount returns how many workers answered CmdStats since it was
// cleared, and their sums.
func (t *tracker) takeStats() (n int, sum Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.stats {
		sum.Held += e.Held
		sum.Upserts += e.Upserts
		sum.Bytes += e.Bytes
	}
	n = len(t.stats)
	return n, sum
}

func (t *tracker) clearStats() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats = map[int]Event{}
}

func (t *tracker) agentErrors() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.errors...)
}
