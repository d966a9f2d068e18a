package hubclient

import (
	"context"
	"time"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// work is one apply worker: it runs queued tasks until ctx ends.
func (c *Client) work(ctx context.Context) {
	for {
		key, t, ok := c.queue.get(ctx)
		if !ok {
			return
		}
		c.do(ctx, key, t)
		c.queue.done(key)
	}
}

// do writes t's record when asked, then carries out its action.
func (c *Client) do(ctx context.Context, key string, t task) {
	if t.persist {
		if !c.persist(ctx, key, t) {
			return
		}
		t.persist = false // written: a retry of the action does not write it again
	}
	switch {
	case t.recordOnly:
	case t.deletion != nil:
		c.delete(ctx, key, t)
	default:
		c.apply(ctx, key, t)
	}
}

// apply applies t.work, records the result and retries a failure later.
func (c *Client) apply(ctx context.Context, key string, t task) {
	began := c.cfg.Now()
	ack, err := c.cfg.Applier.Apply(ctx, t.work)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		ack = &agentv1.Ack{Result: agentv1.ApplyResult_APPLY_RESULT_FAILED, Message: err.Error()}
	}
	if ack == nil {
		ack = &agentv1.Ack{Result: agentv1.ApplyResult_APPLY_RESULT_FAILED, Message: "the applier returned no result"}
	}
	if ack.WorkKey == "" {
		ack.WorkKey = key
	}
	if ack.Version == "" {
		ack.Version = t.work.Version
	}
	c.metrics.applied(ack, c.cfg.Now().Sub(began))
	c.mu.Lock()
	c.post(c.books.Result(ack)...)
	c.mu.Unlock()
	if ack.GetResult() == agentv1.ApplyResult_APPLY_RESULT_APPLIED {
		return
	}
	c.log.Warn("work not applied; retrying", "work", key, "version", t.work.Version,
		"result", ack.GetResult(), "message", ack.GetMessage())
	c.retry(key, t)
}

// persist writes the Books' record of key to the state, outside the lock,
// and reports whether to go on with t: it was written and t is still what
// the record says (else a newer task does the rest). Nothing goes on from
// a record that was not written: a work is acknowledged FAILED and written
// again with backoff, a deletion does not start (it is undecided).
func (c *Client) persist(ctx context.Context, key string, t task) bool {
	c.mu.Lock()
	h, ok := c.books.Held(key)
	c.mu.Unlock()
	if !ok || !t.holds(h) {
		return false // replaced or deleted meanwhile: that task does the rest
	}
	err := c.cfg.Store.PutWork(ctx, h)
	if ctx.Err() != nil {
		return false
	}
	if err == nil {
		if t.failures > 0 && t.deletion == nil && !t.recordOnly {
			c.log.Info("work saved to the agent's state after a failed attempt; applying it", "work", key, "version", t.work.Version)
		}
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case t.deletion != nil:
		c.books.Undecide(key)
		c.log.Error("deletion not started: its record could not be saved", "work", key, "reason", t.deletion.Reason, "error", err)
	case t.recordOnly:
		c.log.Error("work record not saved; the agent goes on with it in memory (a restart restarts an orphan's grace period)", "work", key, "error", err)
	default:
		c.unsaved(t.work, err)
		c.retry(key, t)
	}
	return false
}

// holds reports whether h, the Books' record of t's key, is still the one
// t acts on.
func (t task) holds(h state.Held) bool {
	switch {
	case t.recordOnly:
		return true
	case t.deletion != nil:
		return h.Removal != nil && h.Work.Version == t.deletion.Work.Version
	default:
		return h.Removal == nil && h.Work.Version == t.work.Version
	}
}

// delete carries out t.deletion and forgets the work once it is done.
func (c *Client) delete(ctx context.Context, key string, t task) {
	d := *t.deletion
	err := c.cfg.Applier.Delete(ctx, d.Work, d.Removal)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		c.log.Warn("work not deleted; retrying", "work", key, "policy", d.Policy, "reason", d.Reason, "error", err)
		c.retry(key, t)
		return
	}
	c.metrics.deletes.WithLabelValues(reasonLabel(d.Reason)).Inc()
	c.mu.Lock()
	forget, send := c.books.Deleted(d)
	stream := c.books.s
	c.mu.Unlock()
	if !forget {
		return
	}
	if err := c.cfg.Store.DeleteWork(ctx, key); err != nil {
		c.log.Error("deleted work not removed from the state", "work", key, "error", err)
	}
	c.log.Info("work deleted", "work", key, "version", d.Work.Version, "policy", d.Policy, "reason", d.Reason, "hub_identity", d.Hub, "evicted", d.Evicted)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.books.s == stream { // the ack is for the stream it was decided on
		c.post(send...)
	}
}

// retry queues t again after the apply backoff for its failures.
func (c *Client) retry(key string, t task) {
	wait := applyRetry.Delay(t.failures)
	t.failures++
	c.queue.retry(key, t, c.cfg.Now().Add(wait))
}

// evict deletes orphaned works past the grace period, checking every
// evictEvery(grace); it returns at once when eviction is off.
func (c *Client) evict(ctx context.Context) {
	grace := c.cfg.EvictionGrace
	if grace <= 0 {
		return
	}
	t := time.NewTicker(evictEvery(grace))
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		c.mu.Lock()
		e := c.books.Evictions(c.cfg.Now(), grace)
		for _, d := range e.Delete {
			c.log.Info("evicting orphaned work after the grace period", "work", d.Work.Key, "hub_identity", d.Hub, "grace", grace)
		}
		c.carryOut(e)
		c.mu.Unlock()
	}
}

// evictEvery is how often orphaned works are checked: a tenth of the grace
// period (an eviction is at most 10% late), at most a minute.
func evictEvery(grace time.Duration) time.Duration {
	return min(max(grace/10, time.Millisecond), time.Minute)
}
