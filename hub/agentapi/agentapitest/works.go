package agentapitest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
)

// Works is an in-memory agentapi.Works. It remembers every key it ever had
// per cluster, so Gone vouches for removed keys and not for unknown ones.
type Works struct {
	mu      sync.Mutex                                   // guards the fields below
	rev     int64                                        // revision of the last change
	current map[string]map[string]*agentv1.WorkUpsert    // cluster → key → work
	removed map[string]map[string]agentv1.DeletionPolicy // cluster → removed key → policy
	history map[string][]change                          // cluster → changes, by revision
	changed chan struct{}                                // closed and replaced at every change
	failing error                                        // returned by every call when set
	ready   chan struct{}                                // Ready; closed unless NotReady
	held    chan struct{}                                // Current waits until it is closed; nil: no wait
	// storeRev is the store revision the works reflect (StoreFollower).
	storeRev int64
}

type change struct {
	rev int64
	c   agentapi.WorkChange
}

var (
	_ agentapi.Works         = (*Works)(nil)
	_ agentapi.Readiness     = (*Works)(nil)
	_ agentapi.StoreFollower = (*Works)(nil)
)

// NewWorks returns empty Works at revision 1.
func NewWorks() *Works {
	return &Works{
		rev:     1,
		current: make(map[string]map[string]*agentv1.WorkUpsert),
		removed: make(map[string]map[string]agentv1.DeletionPolicy),
		history: make(map[string][]change),
		changed: make(chan struct{}),
		ready:   closed(),
	}
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Ready implements agentapi.Readiness: closed unless NotReady was called
// and SetReady not since.
func (w *Works) Ready() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ready
}

// NotReady makes the works not ready until SetReady, as a restarted hub's
// renderer is while it rebuilds.
func (w *Works) NotReady() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ready = make(chan struct{})
}

// HoldCurrent makes Current wait until the returned func is called, as a
// slow store would.
func (w *Works) HoldCurrent() (release func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	held := make(chan struct{})
	w.held = held
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			w.held = nil
			w.mu.Unlock()
			close(held)
		})
	}
}

// SetReady ends NotReady.
func (w *Works) SetReady() {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.ready:
	default:
		close(w.ready)
	}
}

// Set creates or replaces works of each of clusters, in one revision, and
// returns it.
func (w *Works) Set(clusters []string, works ...*agentv1.WorkUpsert) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rev++
	for _, cluster := range clusters {
		if w.current[cluster] == nil {
			w.current[cluster] = make(map[string]*agentv1.WorkUpsert)
		}
		for _, work := range works {
			w.current[cluster][work.GetWorkKey()] = work
			delete(w.removed[cluster], work.GetWorkKey())
			w.history[cluster] = append(w.history[cluster], change{w.rev, agentapi.WorkChange{Key: work.GetWorkKey(), Work: work}})
		}
	}
	w.notifyLocked()
	return w.rev
}

// Remove removes works of cluster, with the deletion policy of their last
// version, and returns the revision.
func (w *Works) Remove(cluster string, keys ...string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.rev++
	if w.removed[cluster] == nil {
		w.removed[cluster] = make(map[string]agentv1.DeletionPolicy)
	}
	for _, key := range keys {
		policy := w.current[cluster][key].GetApplyOptions().GetDeletionPolicy()
		delete(w.current[cluster], key)
		w.removed[cluster][key] = policy
		w.history[cluster] = append(w.history[cluster], change{w.rev, agentapi.WorkChange{Key: key, Policy: policy}})
	}
	w.notifyLocked()
	return w.rev
}

// Fail makes every later call return err (nil: work again).
func (w *Works) Fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failing = err
	w.notifyLocked()
}

func (w *Works) notifyLocked() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// Current implements agentapi.Works.
func (w *Works) Current(ctx context.Context, cluster string) ([]*agentv1.WorkUpsert, int64, error) {
	w.mu.Lock()
	if held := w.held; held != nil {
		w.mu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
		w.mu.Lock()
	}
	defer w.mu.Unlock()
	if w.failing != nil {
		return nil, 0, w.failing
	}
	out := make([]*agentv1.WorkUpsert, 0, len(w.current[cluster]))
	for _, work := range w.current[cluster] {
		out = append(out, work)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetWorkKey() < out[j].GetWorkKey() })
	return out, w.rev, nil
}

// Changes implements agentapi.Works.
func (w *Works) Changes(ctx context.Context, cluster string, rev int64) ([]agentapi.WorkChange, int64, <-chan struct{}, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failing != nil {
		return nil, rev, nil, w.failing
	}
	if rev > w.rev {
		return nil, rev, nil, fmt.Errorf("agentapitest: revision %d is in the future (current %d)", rev, w.rev)
	}
	hist := w.history[cluster]
	i := sort.Search(len(hist), func(i int) bool { return hist[i].rev > rev })
	if i == len(hist) {
		return nil, rev, w.changed, nil
	}
	out := make([]agentapi.WorkChange, 0, len(hist)-i)
	for _, h := range hist[i:] {
		out = append(out, h.c)
	}
	return out, hist[len(hist)-1].rev, w.changed, nil
}

// Gone implements agentapi.Works: keys removed from the cluster are gone;
// keys it never had are unknown.
func (w *Works) Gone(ctx context.Context, cluster string, keys []string) ([]agentapi.WorkChange, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failing != nil {
		return nil, w.failing
	}
	var out []agentapi.WorkChange
	for _, key := range keys {
		if policy, ok := w.removed[cluster][key]; ok {
			out = append(out, agentapi.WorkChange{Key: key, Policy: policy})
		}
	}
	return out, nil
}

// Applied sets the store revision the works reflect (StoreRevision), and
// wakes WaitApplied.
func (w *Works) Applied(rev int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.storeRev = rev
}

// StoreRevision implements agentapi.StoreFollower.
func (w *Works) StoreRevision() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.storeRev
}

// WaitApplied implements agentapi.StoreFollower: it polls StoreRevision.
func (w *Works) WaitApplied(ctx context.Context, rev int64) bool {
	for {
		if w.StoreRevision() >= rev {
			return true
		}
		select {
		case <-ctx.Done():
			return w.StoreRevision() >= rev
		case <-time.After(10 * time.Millisecond):
		}
	}
}
