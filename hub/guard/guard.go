package guard

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// ErrPanicked wraps the panic of one key turned into an error by Do.
var ErrPanicked = errors.New("guard: panicked")

// Kinds of events counted.
const (
	// KindPanic: the work of one key panicked and was skipped.
	KindPanic = "panic"
	// KindDecode: a stored object did not decode; the last good value was
	// kept.
	KindDecode = "decode_error"
	// KindRefused: an agent-supplied blob was refused at the protocol
	// boundary.
	KindRefused = "refused_report"
)

// Do runs fn for key and returns its error. A panic in fn is recovered,
// logged at error level with the key and the stack, counted as KindPanic
// of component, and returned as an error wrapping ErrPanicked. counts may
// be nil.
func Do(log hclog.Logger, counts *Counts, component, key string, fn func() error) (err error) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		counts.Add(component, KindPanic)
		log.Error("panic on one key recovered; the key is skipped", "component", component, "key", key,
			"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		err = fmt.Errorf("%w: %s %s: %v", ErrPanicked, component, key, v)
	}()
	return fn()
}

// Event names a counted event.
type Event struct {
	Component, Kind string
}

// Counts tallies events by component and kind. The zero value is not
// usable; a nil *Counts ignores Add.
type Counts struct {
	mu sync.Mutex // guards m
	m  map[Event]int64
}

// NewCounts returns empty counts.
func NewCounts() *Counts { return &Counts{m: map[Event]int64{}} }

// Add counts one event; a nil c does nothing.
func (c *Counts) Add(component, kind string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[Event{component, kind}]++
}

// Get returns the count of one event.
func (c *Counts) Get(component, kind string) int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[Event{component, kind}]
}

// Snapshot returns every event counted so far with its count, sorted by
// component then kind.
func (c *Counts) Snapshot() ([]Event, []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	events := make([]Event, 0, len(c.m))
	for e := range c.m {
		events = append(events, e)
	}
	sort.Slice(events, func(i, j int) bool {
		if events[i].Component != events[j].Component {
			return events[i].Component < events[j].Component
		}
		return events[i].Kind < events[j].Kind
	})
	counts := make([]int64, len(events))
	for i, e := range events {
		counts[i] = c.m[e]
	}
	return events, counts
}
