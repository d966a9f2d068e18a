package status

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/client-go/util/workqueue"

	"github.com/tetherproj/tether/agent/apply"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Source is what the reporter reads applied works from; *apply.Applier
// satisfies it.
type Source interface {
	Keys() []string
	Snapshot(ctx context.Context, key string) (apply.Snapshot, bool)
	Changes() <-chan string
}

// Defaults for Config.
const (
	// DefaultMinInterval is how often, past DefaultWorkBurst reports in a
	// row, one work may be reported unless the hub's
	// Settings.status_min_interval says otherwise.
	DefaultMinInterval = time.Second
	// DefaultResync is how often every held work is read again, for
	// objects no informer watches (read-only) and as a safety net.
	DefaultResync = 30 * time.Second
)

// Config configures a Reporter.
type Config struct {
	Source      Source
	Interpreter Interpreter
	// MinInterval: zero means DefaultMinInterval. SetMinInterval changes it.
	MinInterval time.Duration
	// Coalesce: zero means DefaultCoalesce.
	Coalesce time.Duration
	// Resync: zero means DefaultResync.
	Resync time.Duration
}

// Reporter produces coalesced, change-only StatusReports. It implements
// agent/hubclient.StatusSource. Build it with New; call Run once.
type Reporter struct {
	logger   hclog.Logger
	src      Source
	interp   Interpreter
	resync   time.Duration
	coalesce time.Duration
	out      chan *agentv1.StatusReport

	// mu guards everything below.
	mu     sync.Mutex
	sched  *schedule                                // when each work's next report may go out
	sent   map[string]sent                          // by work key
	forced map[string]bool                          // keys whose next report goes out regardless of digest
	queue  workqueue.TypedDelayingInterface[string] // nil outside Run
}

// sent is the last report sent for a work.
type sent struct {
	version, digest string
}

// New returns a Reporter.
func New(cfg Config, logger hclog.Logger) *Reporter {
	if cfg.MinInterval <= 0 {
		cfg.MinInterval = DefaultMinInterval
	}
	if cfg.Resync <= 0 {
		cfg.Resync = DefaultResync
	}
	if cfg.Coalesce <= 0 {
		cfg.Coalesce = DefaultCoalesce
	}
	return &Reporter{
		logger:   logger.Named("status"),
		src:      cfg.Source,
		interp:   cfg.Interpreter,
		resync:   cfg.Resync,
		coalesce: cfg.Coalesce,
		out:      make(chan *agentv1.StatusReport),
		sched:    newSchedule(cfg.MinInterval, DefaultWorkBurst, DefaultStreamRate, DefaultStreamBurst),
		sent:     map[string]sent{},
		forced:   map[string]bool{},
	}
}

// Reports returns the channel reports are sent on; it is never closed.
func (r *Reporter) Reports() <-chan *agentv1.StatusReport { return r.out }

// SetMinInterval applies the hub's Settings.status_min_interval (zero or
// less restores the default).
func (r *Reporter) SetMinInterval(d time.Duration) {
	if d <= 0 {
		d = DefaultMinInterval
	}
	r.mu.Lock()
	r.sched.setMinInterval(d, time.Now())
	r.mu.Unlock()
}

// Resend makes the next report of each key (every held work when keys is
// empty) go out even if its digest was sent before. It does not block.
func (r *Reporter) Resend(keys []string) {
	if len(keys) == 0 {
		keys = r.src.Keys()
	}
	r.mu.Lock()
	for _, k := range keys {
		r.forced[k] = true
	}
	q := r.queue
	r.mu.Unlock()
	if q == nil {
		return // Run reads every work when it starts
	}
	for _, k := range keys {
		q.Add(k)
	}
}

// Refresh reads every held work again now, and reports those whose status
// changed: the interpreter's rules changed (new customizations). It does
// not block.
func (r *Reporter) Refresh() {
	r.mu.Lock()
	q := r.queue
	r.mu.Unlock()
	if q == nil {
		return // Run reads every work when it starts
	}
	for _, k := range r.src.Keys() {
		q.Add(k)
	}
}

// Run reports until ctx ends, then stops its workers and returns nil.
func (r *Reporter) Run(ctx context.Context) error {
	q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: "tether_status"})
	r.mu.Lock()
	r.queue = q
	r.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.work(ctx, q)
	}()
	r.feed(ctx, q)
	r.mu.Lock()
	r.queue = nil
	r.mu.Unlock()
	q.ShutDown()
	wg.Wait()
	return nil
}

// feed queues every held work now and every Resync, and every changed
// work Coalesce after the source first signals it, until ctx ends.
func (r *Reporter) feed(ctx context.Context, q workqueue.TypedDelayingInterface[string]) {
	tick := time.NewTicker(r.resync)
	defer tick.Stop()
	all := func() {
		for _, k := range r.src.Keys() {
			q.Add(k)
		}
	}
	all()
	for {
		select {
		case <-ctx.Done():
			return
		case key := <-r.src.Changes():
			q.AddAfter(key, r.coalesce) // a key already waiting keeps its earlier time
		case <-tick.C:
			all()
		}
	}
}

// work builds and sends reports for queued keys until q shuts down.
func (r *Reporter) work(ctx context.Context, q workqueue.TypedDelayingInterface[string]) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		if ctx.Err() == nil {
			r.report(ctx, q, key)
		}
		q.Done(key)
	}
}

// report sends key's report if it changed, or requeues key until the
// schedule lets it go out.
func (r *Reporter) report(ctx context.Context, q workqueue.TypedDelayingInterface[string], key string) {
	snap, ok := r.src.Snapshot(ctx, key)
	if !ok {
		r.mu.Lock()
		delete(r.sent, key)
		delete(r.forced, key)
		r.sched.forget(key)
		r.mu.Unlock()
		return
	}
	r.mu.Lock()
	last, force := r.sent[key], r.forced[key]
	wait := r.sched.wait(key, time.Now())
	r.mu.Unlock()
	if wait > 0 {
		q.AddAfter(key, wait)
		return
	}
	rep := Build(ctx, r.interp, snap)
	if !force && last.version == rep.Version && last.digest == rep.Digest {
		return
	}
	rep.ObserveTime = timestamppb.Now()
	select {
	case r.out <- rep:
	case <-ctx.Done():
		return
	}
	r.mu.Lock()
	r.sent[key] = sent{version: rep.Version, digest: rep.Digest}
	r.sched.take(key, time.Now())
	delete(r.forced, key)
	r.mu.Unlock()
	r.logger.Trace("status reported", "work", key, "version", rep.Version, "digest", rep.Digest)
}
