package hubclient

import (
	"context"
	"sync"
	"time"

	"github.com/tetherproj/tether/agent/state"
)

// task is one thing to do for a work key: write its record to the state,
// then apply its work, carry out a deletion, or nothing more.
type task struct {
	work     state.Work // to apply, when deletion is nil and not recordOnly
	deletion *Deletion
	// persist: the work's record (the Books' current one) is written to
	// the state first, and nothing else is done unless it was written.
	persist bool
	// recordOnly: the task only writes the record (an orphan mark).
	recordOnly bool
	failures   int // consecutive failures so far, for the retry backoff
}

// merge is the task waiting for a key once next arrives for it: next,
// except that a record write never replaces an action (the action writes
// the record first), and that a record write still to do is never lost.
func merge(waiting, next task) task {
	if next.recordOnly && !waiting.recordOnly {
		waiting.persist = true
		return waiting
	}
	next.persist = next.persist || waiting.persist
	return next
}

// queue holds at most one task per work key (a newer task replaces a
// waiting one: the latest state wins) and hands each key to one worker at
// a time. Tasks may wait until a time (retries).
type queue struct {
	wake chan struct{} // buffered, 1: a task may have become ready

	mu      sync.Mutex           // guards the fields below
	waiting map[string]*entry    // tasks not yet handed out, by key
	fifo    []string             // keys of ready waiting tasks, in order
	busy    map[string]bool      // keys handed to a worker and not Done
	timed   map[string]time.Time // keys of waiting tasks that wait until a time
	now     func() time.Time
}

type entry struct {
	t      task
	queued bool // key is in fifo
}

func newQueue(now func() time.Time) *queue {
	return &queue{
		wake:    make(chan struct{}, 1),
		waiting: map[string]*entry{},
		busy:    map[string]bool{},
		timed:   map[string]time.Time{},
		now:     now,
	}
}

// add queues t for key, replacing any task waiting for it.
func (q *queue) add(key string, t task) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.timed, key)
	e, ok := q.waiting[key]
	if !ok {
		e = &entry{t: t}
		q.waiting[key] = e
	} else {
		e.t = merge(e.t, t)
	}
	q.ready(key, e)
}

// retry queues t for key at the time at, unless a newer task for key is
// already waiting; a waiting record write takes t's action (at once).
func (q *queue) retry(key string, t task, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, ok := q.waiting[key]; ok {
		if e.t.recordOnly {
			t.persist = true
			e.t = t
		}
		return
	}
	q.waiting[key] = &entry{t: t}
	q.timed[key] = at
	q.signal()
}

// ready puts key in fifo unless it is there or busy. mu is held.
func (q *queue) ready(key string, e *entry) {
	if !e.queued && !q.busy[key] {
		e.queued = true
		q.fifo = append(q.fifo, key)
		q.signal()
	}
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// get returns the next ready task, waiting for one until ctx ends.
func (q *queue) get(ctx context.Context) (string, task, bool) {
	for {
		key, t, wait, ok := q.take()
		if ok {
			return key, t, true
		}
		if !q.wait(ctx, wait) {
			return "", task{}, false
		}
	}
}

// wait waits for a signal, for d when d > 0, or until ctx ends (false).
func (q *queue) wait(ctx context.Context, d time.Duration) bool {
	var timer <-chan time.Time
	if d > 0 {
		tm := time.NewTimer(d)
		defer tm.Stop()
		timer = tm.C
	}
	select {
	case <-q.wake:
	case <-timer:
	case <-ctx.Done():
		return false
	}
	return true
}

// take hands out the first ready task, or says how long until a timed one
// is due (0: none is timed).
func (q *queue) take() (string, task, time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	var wait time.Duration
	for key, at := range q.timed {
		if d := at.Sub(now); d > 0 {
			if wait == 0 || d < wait {
				wait = d
			}
			continue
		}
		delete(q.timed, key)
		q.ready(key, q.waiting[key])
	}
	if len(q.fifo) > 0 {
		q.signal() // another worker may take the next one
	}
	for len(q.fifo) > 0 {
		key := q.fifo[0]
		q.fifo = q.fifo[1:]
		e := q.waiting[key]
		e.queued = false
		if q.busy[key] {
			continue // put back in fifo by done
		}
		delete(q.waiting, key)
		q.busy[key] = true
		return key, e.t, 0, true
	}
	return "", task{}, wait, false
}

// done ends a worker's hold on key; a task that arrived meanwhile becomes
// ready.
func (q *queue) done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.busy, key)
	if e, ok := q.waiting[key]; ok {
		if _, timed := q.timed[key]; !timed {
			q.ready(key, e)
		}
	}
}

// len returns the number of tasks waiting or being worked on.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting) + len(q.busy)
}
