package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sync/errgroup"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
)

// write is a decision to store: the binding at key changes from old to
// out.Binding, encoded as enc.
type write struct {
	key string
	old *entry
	out place.Outcome
	enc string
}

// withItems makes sure the cached binding of key holds its aggregated
// status items when Step reads them (readsHealth), reading it from the
// store; false when it could not (retried later).
func (l *Loop) withItems(ctx context.Context, key string) bool {
	e, ok := l.bindings[key]
	if !ok || e.items || !readsHealth(e.b) {
		return true
	}
	if l.reread(ctx, key) {
		return true
	}
	l.retryLater(key, errors.New("binding not read with its aggregated status"))
	return false
}

// decide runs Step on one cached binding and returns the write its
// outcome needs, if any. The outcome is cached at once (at the old
// revision until written), so that the works counts of the bindings
// decided after it in the same round count it.
func (l *Loop) decide(key string) (write, bool) {
	e, ok := l.bindings[key]
	if !ok {
		return write{}, false
	}
	opts := l.options()
	opts.UnhealthySince = l.unhealthy[key]
	out := place.StepIndexed(e.b, l.members, l.index, l.clock.Now(), opts)
	l.examined.Add(1)
	l.setRecheck(key, out)
	l.setUnhealthy(key, out.UnhealthySince)
	if out.Binding == e.b {
		return write{}, false
	}
	// Encoded here, not at every event: the aggregator's status writes of
	// a binding of many clusters come far more often than decisions.
	enc := place.JSONString(out.Binding)
	if enc == place.JSONString(e.b) {
		return write{}, false
	}
	l.setEntry(key, &entry{b: out.Binding, rev: e.rev, items: e.items})
	return write{key: key, old: e, out: out, enc: enc}, true
}

// writeAll stores the decided writes, up to maxInFlight at once: each is
// a binding of its own, and one after the other they cost a store round
// each (a round under a busy hub's load is tens of milliseconds, and a
// thousand new templates made the scheduler a queue of them). A write
// that conflicted is undone in the cache and reconciled again from a
// fresh read; any other failure is retried after retryAfter.
func (l *Loop) writeAll(ctx context.Context, writes []write) {
	revs := make([]int64, len(writes))
	errs := make([]error, len(writes))
	var g errgroup.Group
	g.SetLimit(maxInFlight)
	for i, w := range writes {
		g.Go(func() error {
			revs[i], errs[i] = l.update(ctx, w)
			return nil // each write keeps its own outcome
		})
	}
	_ = g.Wait()
	for i, w := range writes {
		if l.wrote(w, revs[i], errs[i]) {
			continue
		}
		if errors.Is(errs[i], store.ErrConflict) && l.reread(ctx, w.key) {
			l.reconcile(ctx, w.key)
			continue
		}
		l.retryLater(w.key, errs[i])
	}
}

// wrote records the outcome of w's write: stored at rev, or undone in the
// cache when err is not nil (false).
func (l *Loop) wrote(w write, rev int64, err error) bool {
	if err != nil {
		l.setEntry(w.key, w.old)
		return false
	}
	l.bindings[w.key].rev = rev
	l.writes.Add(1)
	l.logWrite(w.key, w.old.b, w.out)
	return true
}

// reconcile decides and writes one binding, with optimistic concurrency:
// on a conflict it re-reads the binding and decides again. A failed write
// is retried after retryAfter.
func (l *Loop) reconcile(ctx context.Context, key string) {
	for range conflictRetries {
		w, ok := l.decide(key)
		if !ok {
			return
		}
		rev, err := l.update(ctx, w)
		if l.wrote(w, rev, err) {
			return
		}
		if !errors.Is(err, store.ErrConflict) || !l.reread(ctx, key) {
			l.retryLater(key, err)
			return
		}
	}
	l.retryLater(key, errors.New("too many write conflicts"))
}

// setUnhealthy records the application failover's memory of key.
func (l *Loop) setUnhealthy(key string, since map[string]time.Time) {
	if len(since) == 0 {
		delete(l.unhealthy, key)
		return
	}
	l.unhealthy[key] = since
}

// setRecheck records when to look at key again.
func (l *Loop) setRecheck(key string, out place.Outcome) {
	if out.Recheck.IsZero() {
		delete(l.rechecks, key)
		return
	}
	l.rechecks[key] = out.Recheck
}

// reread refreshes the cached binding from the store; false when it could
// not (it is gone, or the store failed).
func (l *Loop) reread(ctx context.Context, key string) bool {
	kv, err := l.store.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		l.setEntry(key, nil)
		return false
	}
	if err != nil {
		return false
	}
	b, err := workv1alpha1.Decode(kv.Value)
	if err != nil {
		return false
	}
	l.setEntry(key, &entry{b: b, rev: kv.Revision, items: true})
	return true
}

// options are Step's options from the config and the works counts.
func (l *Loop) options() place.Options {
	return place.Options{
		EvictionTimeout:       l.cfg.GracefulEvictionTimeout,
		EmptyWorkloads:        l.cfg.EnableEmptyWorkloadPropagation,
		FailoverUnreachable:   l.cfg.FailoverUnreachable,
		UnreachableToleration: l.cfg.UnreachableToleration,
		Full:                  l.full,
	}
}

func (l *Loop) retryLater(key string, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	if _, ok := l.bindings[key]; !ok {
		return
	}
	l.log.Warn("binding not written, retrying", "key", key, "error", err, "retry_after", retryAfter)
	l.rechecks[key] = l.clock.Now().Add(retryAfter)
}

// logWrite says what a write changed.
func (l *Loop) logWrite(key string, old *workv1alpha1.ResourceBinding, out place.Outcome) {
	log := l.log.With("binding", key)
	for _, c := range out.Returned {
		log.Info("eviction called off: the cluster is back and keeps its copy", "cluster", c)
	}
	for _, ev := range out.Evicted {
		log.Info("evicted from cluster", "cluster", ev.Cluster, "taint", ev.Taint.ToString())
	}
	for _, c := range out.AppEvicted {
		log.Info("application failover: evicted from cluster, its application stayed Unhealthy past the toleration", "cluster", c)
	}
	if out.Reason == placement.ReasonNone {
		log.Debug("binding updated", "eviction_tasks", len(out.Binding.Spec.GracefulEvictionTasks))
		return
	}
	level := hclog.Info
	if out.Err != nil {
		level = hclog.Warn
	}
	log.Log(level, "scheduled", "reason", out.Reason, "clusters", targetNames(out.Binding), "previous", targetNames(old), "error", out.Err)
}

// logNames is how many cluster names a log line of a write lists.
const logNames = 10

// targetNames names b's clusters for a log line: the first logNames and
// how many more (a binding Duplicated to a thousand clusters made every
// line 14 KB).
func targetNames(b *workv1alpha1.ResourceBinding) []string {
	out := make([]string, 0, min(len(b.Spec.Clusters), logNames+1))
	for _, t := range b.Spec.Clusters[:min(len(b.Spec.Clusters), logNames)] {
		out = append(out, t.Name)
	}
	if more := len(b.Spec.Clusters) - logNames; more > 0 {
		out = append(out, fmt.Sprintf("(and %d more)", more))
	}
	return out
}

// update stores w's binding over revision w.old.rev. A binding decided
// without its aggregated status items (the view's) gets the items stored
// at that revision put back, so that a write of the scheduler's never
// drops what hub/aggregate wrote; if the binding moved since, it is a
// conflict.
func (l *Loop) update(ctx context.Context, w write) (int64, error) {
	enc := w.enc
	if !w.old.items {
		kv, err := l.store.Get(ctx, w.key)
		if err != nil {
			return 0, err
		}
		if kv.Revision != w.old.rev {
			return 0, fmt.Errorf("binding %s moved before its write: %w", w.key, store.ErrConflict)
		}
		items, err := storedItems(kv.Value)
		if err != nil {
			return 0, fmt.Errorf("binding %s: %w", w.key, err)
		}
		b := *w.out.Binding // a shallow copy: the cached binding keeps no items
		b.Status.AggregatedStatus = items
		enc = place.JSONString(&b)
	}
	return l.store.Update(ctx, w.key, []byte(enc), w.old.rev)
}

// storedItems decodes only the aggregated status items of a stored
// binding.
func storedItems(data []byte) ([]configv1alpha1.AggregatedStatusItem, error) {
	var doc struct {
		Status struct {
			AggregatedStatus []configv1alpha1.AggregatedStatusItem `json:"aggregatedStatus"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decode aggregated status: %w", err)
	}
	return doc.Status.AggregatedStatus, nil
}
