package load

import (
	"bytes"
	"context"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// GenAnnotation is the annotation whose value, a decimal number, is the
// generation of a template: the driver bumps it to change every work at
// once, and a member counts the works it holds of each generation.
const GenAnnotation = "load.tether.io/gen"

// genMarker is how GenAnnotation appears in a rendered manifest (compact
// JSON), followed by the quoted value.
var genMarker = []byte(`"` + GenAnnotation + `":"`)

// genOf returns the generation a work's manifests carry; -1 for none.
func genOf(manifests [][]byte) int {
	for _, m := range manifests {
		i := bytes.Index(m, genMarker)
		if i < 0 {
			continue
		}
		rest := m[i+len(genMarker):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 {
			continue
		}
		if g, err := strconv.Atoi(string(rest[:end])); err == nil {
			return g
		}
	}
	return -1
}

// memBackend keeps an agent's state blobs in memory (agent/state.Backend):
// the simulated member's --data-dir, which survives the agent's streams
// and reconnects within its worker process.
type memBackend struct {
	mu    sync.Mutex // guards blobs
	blobs map[string][]byte
}

func newMemBackend() *memBackend { return &memBackend{blobs: map[string][]byte{}} }

func (b *memBackend) ReadAll(context.Context) (map[string][]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.blobs), nil
}

func (b *memBackend) Write(_ context.Context, name string, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blobs[name] = data // the store never changes it after Write (state.Backend)
	return nil
}

func (b *memBackend) Delete(_ context.Context, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.blobs, name)
	return nil
}

func (b *memBackend) Where(name string) string { return "memory:" + name }

// member is a simulated member cluster: it records the works it is given
// (hubclient.Applier) and reports each applied and healthy
// (hubclient.StatusSource). It counts the works it holds per generation
// and calls onGen once when the count of a watched generation reaches
// its target.
type member struct {
	onGen func(gen int, at time.Time)

	mu sync.Mutex // guards the fields below
	// gens is the generation of each held work, works its version and
	// manifest count (for Resend).
	gens  map[string]int
	works map[string]heldWork
	// counts is how many held works are of each generation.
	counts map[int]int
	// watch is the generation and count onGen waits for; watchDone once
	// reported.
	watchGen, watchCount int
	watchDone            bool
	// applied counts Apply calls.
	applied int64
	// pending holds the latest report per work key not yet taken by the
	// client; wake (buffered, 1) says it holds some.
	pending map[string]*agentv1.StatusReport
	wake    chan struct{}
	out     chan *agentv1.StatusReport
}

func newMember(onGen func(int, time.Time)) *member {
	return &member{
		onGen: onGen, gens: map[string]int{}, works: map[string]heldWork{}, counts: map[int]int{}, watchGen: -1,
		pending: map[string]*agentv1.StatusReport{}, wake: make(chan struct{}, 1),
		out: make(chan *agentv1.StatusReport),
	}
}

// Apply records w and reports it applied (hubclient.Applier).
func (m *member) Apply(_ context.Context, w state.Work) (*agentv1.Ack, error) {
	g := genOf(w.Manifests)
	now := time.Now()
	m.mu.Lock()
	m.applied++
	if old, ok := m.gens[w.Key]; ok {
		m.counts[old]--
	}
	m.gens[w.Key] = g
	m.works[w.Key] = heldWork{version: w.Version, manifests: len(w.Manifests)}
	m.counts[g]++
	fire := m.checkWatch()
	m.pending[w.Key] = healthy(w.Key, m.works[w.Key])
	m.mu.Unlock()
	m.signal()
	if fire {
		m.onGen(g, now)
	}
	return &agentv1.Ack{Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}, nil
}

// Delete forgets w (hubclient.Applier).
func (m *member) Delete(_ context.Context, w state.Work, _ state.Removal) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.gens[w.Key]; ok {
		m.counts[old]--
		delete(m.gens, w.Key)
		delete(m.works, w.Key)
	}
	delete(m.pending, w.Key)
	return nil
}

// expect makes onGen fire once count works of generation gen are held
// (at once if they already are).
func (m *member) expect(gen, count int) {
	m.mu.Lock()
	m.watchGen, m.watchCount, m.watchDone = gen, count, false
	fire := m.checkWatch()
	m.mu.Unlock()
	if fire {
		m.onGen(gen, time.Now())
	}
}

// checkWatch reports whether the watched generation just reached its
// count; m.mu is held.
func (m *member) checkWatch() bool {
	if m.watchDone || m.watchGen < 0 || m.counts[m.watchGen] < m.watchCount {
		return false
	}
	m.watchDone = true
	return true
}

// held returns how many works the member holds.
func (m *member) held() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.gens)
}

// heldWork is what a member keeps of a work for its status reports.
type heldWork struct {
	version   string
	manifests int
}

// healthy is the report of work key applied and healthy at w.version: one
// status per manifest.
func healthy(key string, w heldWork) *agentv1.StatusReport {
	r := &agentv1.StatusReport{WorkKey: key, Version: w.version, Digest: "healthy-" + w.version}
	for i := range w.manifests {
		r.Manifests = append(r.Manifests, &agentv1.ManifestStatus{
			Identity: &agentv1.ObjectIdentity{Ordinal: int32(i)},
			Health:   agentv1.Health_HEALTH_HEALTHY, Applied: true,
		})
	}
	return r
}

func (m *member) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// Reports is the channel of status reports (hubclient.StatusSource).
func (m *member) Reports() <-chan *agentv1.StatusReport { return m.out }

// Resend queues the reports of keys again, all held works for none
// (hubclient.StatusSource).
func (m *member) Resend(keys []string) {
	m.mu.Lock()
	for key, w := range m.works {
		if len(keys) == 0 || contains(keys, key) {
			m.pending[key] = healthy(key, w)
		}
	}
	m.mu.Unlock()
	m.signal()
}

func contains(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}

// pump forwards the pending reports to Reports until ctx ends.
func (m *member) pump(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		for {
			r := m.take()
			if r == nil {
				break
			}
			select {
			case m.out <- r:
			case <-ctx.Done():
				return
			}
		}
	}
}

// take removes and returns one pending report; nil when none is.
func (m *member) take() *agentv1.StatusReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, r := range m.pending {
		delete(m.pending, key)
		return r
	}
	return nil
}
