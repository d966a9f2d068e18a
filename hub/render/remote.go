package render

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pipeline/work"
)

// maxRemoteRenders is how many templates whose render calls a webhook
// render at once, off Run's goroutine; more wait their turn. Each may
// hold a webhook call for its timeout (at most 30 s), so this bounds the
// goroutines and connections hung webhooks can hold, while the loop goes
// on rendering every other template.
const maxRemoteRenders = 4

// Remote is what an Interpreter may also tell: whether op for gvk is
// answered by a webhook, a network call that may take the webhook's
// timeout. The facade in internal/interpreter tells it; with an
// Interpreter that does not, every render runs on the loop.
type Remote interface {
	Remote(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
}

// remoteRenders runs the renders that call a webhook off the loop. Per
// work key, one render is in flight at a time and the loop commits its
// result before it plans the key again, so an older render is never
// committed over a newer one. While it is in flight, the key keeps what
// it has: the loop committed its plan without renders (vouching for its
// targets, so Gone says Keep), and changes to it wait in waiting.
type remoteRenders struct {
	// results carry finished plans to the loop; its capacity is
	// maxRemoteRenders, so a render never waits to hand its result over.
	results chan *plan
	wg      sync.WaitGroup

	// Only Run's goroutine uses these.
	// inflight are the keys started or queued.
	inflight map[string]bool
	running  int
	// queue holds the renders waiting for one of the running to end.
	queue []remoteJob
	// waiting are the keys marked again while in flight, with their
	// clusters as in inputs.dirty (nil: all).
	waiting map[string]map[string]bool
	// finished are results received and not yet committed.
	finished []*plan
}

// remoteJob is the renders of one key and the plan they complete.
type remoteJob struct {
	p    *plan
	jobs []renderJob
}

func newRemoteRenders() *remoteRenders {
	return &remoteRenders{results: make(chan *plan, maxRemoteRenders), inflight: map[string]bool{}, waiting: map[string]map[string]bool{}}
}

// remote reports whether rendering t for b may call a webhook: it
// revises replicas (render.go's revise) and a webhook answers that.
func (r *Renderer) remote(key string) bool {
	rm, ok := r.interp.(Remote)
	if !ok {
		return false
	}
	t, b := r.in.templates[key], r.in.bindings[key]
	return t != nil && b != nil && work.Divided(b) && rm.Remote(t.GroupVersionKind(), configv1alpha1.InterpreterOperationReviseReplica)
}

// deferKey records a mark of a key in flight, merged as inputs.dirty
// merges them.
func (rr *remoteRenders) deferKey(key string, only map[string]bool) {
	set, ok := rr.waiting[key]
	switch {
	case ok && set == nil:
	case only == nil:
		rr.waiting[key] = nil
	default:
		if set == nil {
			set = map[string]bool{}
			rr.waiting[key] = set
		}
		for c := range only {
			set[c] = true
		}
	}
}

// start renders skeleton's jobs off the loop, now or when a slot frees.
func (r *Renderer) startRemote(ctx context.Context, skeleton *plan, jobs []renderJob) {
	rr := r.remotes
	rr.inflight[skeleton.key] = true
	job := remoteJob{p: skeleton, jobs: jobs}
	if rr.running >= maxRemoteRenders {
		rr.queue = append(rr.queue, job)
		return
	}
	r.runRemote(ctx, job)
}

// runRemote starts job. Its result plan shares the skeleton's decisions
// and carries the rendered set.
func (r *Renderer) runRemote(ctx context.Context, job remoteJob) {
	rr := r.remotes
	rr.running++
	rr.wg.Add(1)
	go func() {
		defer rr.wg.Done()
		p := *job.p
		p.set, p.drop, p.failedOver = map[string]*agentv1.WorkUpsert{}, nil, nil // the skeleton dropped them
		err := guard.Do(r.log, r.cfg.Counts, "render", p.key, func() error {
			p.set, p.failed = r.runJobs(ctx, p.key, job.jobs)
			return nil
		})
		if err != nil {
			p.set, p.failed = map[string]*agentv1.WorkUpsert{}, true
		}
		rr.results <- &p
	}()
}

// remoteDone takes a finished render on the loop: the next queued one
// starts, the result waits for the flush, and the key's marks made
// meanwhile are marked again.
func (r *Renderer) remoteDone(ctx context.Context, p *plan) {
	rr := r.remotes
	rr.running--
	if len(rr.queue) > 0 {
		job := rr.queue[0]
		rr.queue = rr.queue[1:]
		r.runRemote(ctx, job)
	}
	delete(rr.inflight, p.key)
	for c := range p.set {
		if r.in.clusters[c] == nil {
			delete(p.set, c) // deleted meanwhile
		}
	}
	p.unsure = nil // the skeleton's; noteResult sets it again if the render failed
	rr.finished = append(rr.finished, p)
	r.noteResult(p)
	if only, ok := rr.waiting[p.key]; ok {
		delete(rr.waiting, p.key)
		if only == nil {
			r.in.markAll(p.key)
		}
		for c := range only {
			r.in.markCluster(p.key, c)
		}
	}
}

// takeFinished returns the results to commit, oldest first.
func (rr *remoteRenders) takeFinished() []*plan {
	out := rr.finished
	rr.finished = nil
	return out
}

// wait waits for the renders in flight; their context has ended.
func (rr *remoteRenders) wait() { rr.wg.Wait() }
