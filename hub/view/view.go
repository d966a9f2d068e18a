package view

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/tools/cache"

	"github.com/tetherproj/tether/hub/store"
)

// Tuned constants of the view.
const (
	// RelistBackoff is the wait before listing again after a store failure
	// other than compaction (a compacted watch lists again at once): the
	// one relist policy of every reader of the view.
	RelistBackoff = 2 * time.Second
)

// errWatchClosed ends a session whose store watch closed without an error.
var errWatchClosed = errors.New("view: store watch closed")

// Source is what the view reads; *store.Store satisfies it.
type Source interface {
	ListEachAt(ctx context.Context, prefix string, rev int64, each func(store.KV)) (int64, error)
	Watch(ctx context.Context, prefix string, fromRev int64, opts ...store.WatchOption) <-chan store.Event
}

// Prefix is one store prefix the view holds.
type Prefix struct {
	// Prefix is the key prefix, e.g. store.BindingsPrefix.
	Prefix string
	// Decode makes the held value of a stored one.
	Decode Decoder
	// Indexers are the prefix's indexes (client-go cache.Indexers over
	// *Object), read with ByIndex.
	Indexers cache.Indexers
}

// View holds the decoded objects under its prefixes, as of one revision.
type View struct {
	src      Source
	log      hclog.Logger
	prefixes []Prefix // sorted by Prefix, none inside another

	// mu guards the fields below; apply holds it for writing while it
	// changes objects and the revision together, so that a reader sees
	// both as of one revision.
	mu      sync.RWMutex
	objects map[string]cache.ThreadSafeStore // by prefix
	rev     int64
	subs    map[*Subscription]struct{}

	synced   chan struct{} // closed after the first complete list
	relists  atomic.Int64  // complete lists published, the first included
	decodes  atomic.Int64  // stored values decoded
	syncOnce sync.Once
}

// New returns a view of prefixes in src; it holds nothing until Run.
func New(src Source, prefixes []Prefix, logger hclog.Logger) (*View, error) {
	ps := append([]Prefix(nil), prefixes...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Prefix < ps[j].Prefix })
	for i, p := range ps {
		if !strings.HasPrefix(p.Prefix, store.Root) || p.Decode == nil {
			return nil, fmt.Errorf("view: prefix %q: outside %s or without a decoder", p.Prefix, store.Root)
		}
		if i > 0 && strings.HasPrefix(p.Prefix, ps[i-1].Prefix) {
			return nil, fmt.Errorf("view: prefix %q is inside %q", p.Prefix, ps[i-1].Prefix)
		}
	}
	v := &View{src: src, log: logger.Named("view"), prefixes: ps, objects: map[string]cache.ThreadSafeStore{},
		subs: map[*Subscription]struct{}{}, synced: make(chan struct{})}
	for _, p := range ps {
		v.objects[p.Prefix] = newObjects(p)
	}
	return v, nil
}

func newObjects(p Prefix) cache.ThreadSafeStore {
	return cache.NewThreadSafeStore(p.Indexers, cache.Indices{})
}

// Run lists and watches the store until ctx ends, then returns nil once
// its watch has stopped. Every prefix is listed (paged, all at one
// revision R) and then followed by one watch of everything under
// store.Root from R+1, so that readers see changes in one revision order
// and the view's revision advances with every change to the store. A
// failed watch lists again (store.Follow: at once after a compaction,
// after RelistBackoff otherwise); until the new list is complete, readers
// keep the view they had.
func (v *View) Run(ctx context.Context) error {
	return store.Follow(ctx, v.log, RelistBackoff, v.session)
}

// session lists, publishes the list, then applies the watch until it
// fails or ctx ends. The store's watch goroutine has exited when it
// returns.
func (v *View) session(ctx context.Context) error {
	rev, err := v.list(ctx)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	events := v.src.Watch(wctx, store.Root, rev+1, store.DeletesWithoutValue)
	defer func() {
		cancel()
		for range events {
		}
	}()
	for {
		var ev store.Event
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok = <-events:
		}
		batch, err := drain(ev, ok, events)
		v.apply(batch)
		if err != nil {
			return err
		}
	}
}

// maxBatch is the most watch events applied under one lock.
const maxBatch = 1000

// drain returns ev and the events already waiting (up to maxBatch), and
// the error that ends the watch if one came.
func drain(ev store.Event, ok bool, events <-chan store.Event) ([]store.Event, error) {
	var batch []store.Event
	for {
		if !ok {
			return batch, errWatchClosed
		}
		if ev.Err != nil {
			return batch, ev.Err
		}
		batch = append(batch, ev)
		if len(batch) == maxBatch {
			return batch, nil
		}
		select {
		case ev, ok = <-events:
		default:
			return batch, nil
		}
	}
}

// apply applies a batch of watch events and tells the subscriptions what
// changed.
func (v *View) apply(batch []store.Event) {
	if len(batch) == 0 {
		return
	}
	changed := make(map[string]bool, len(batch))
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, ev := range batch {
		if p, ok := v.prefixOf(ev.KV.Key); ok {
			v.applyOne(p, ev)
			changed[ev.KV.Key] = true
		}
		v.rev = max(v.rev, ev.KV.Revision)
	}
	for s := range v.subs {
		s.note(changed, false)
	}
}
