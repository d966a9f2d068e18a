package aggregate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// Tuned constants of the relay.
const (
	// relayInterval is the least time between two relay writes: updates
	// received meanwhile are coalesced per work (the last ack and the last
	// report), so a burst costs one write per work.
	relayInterval = 100 * time.Millisecond
	// relayRetry is how long the writer waits after a write failed (etcd
	// unreachable) before trying the queued updates again.
	relayRetry = time.Second
	// relayBatch is the most records written in one etcd transaction,
	// under etcd's default --max-txn-ops of 128.
	relayBatch = 64
	// relayBatchBytes bounds one transaction's values, under etcd's default
	// 1.5 MiB request limit.
	relayBatchBytes = 1 << 20
	// relayAttempts is how many times one flush writes a record whose
	// stored revision moved (another replica wrote it) before leaving it
	// queued for the next flush.
	relayAttempts = 3
	// relayStopTimeout bounds the last flush when Relay stops.
	relayStopTimeout = 2 * time.Second
	// DefaultMaxQueued is how many works may have updates waiting to be
	// relayed: 100,000, far above what one replica's agents change within
	// relayInterval while etcd answers.
	DefaultMaxQueued = 100_000
	// DefaultMaxQueuedBytes bounds the acks and reports waiting to be
	// relayed: 256 MiB of protobuf.
	DefaultMaxQueuedBytes = 256 << 20
	// kindQueueFull counts updates refused because the relay queue was full
	// (tether_hub_controller_errors_total{component="aggregate"}).
	kindQueueFull = "relay_queue_full"
)

// ErrQueueFull: the relay queue is full (etcd has been unreachable or too
// slow for a while). The update is dropped and agentapi ends the stream
// with Unavailable; the agent's reconnect sends its status digests and the
// hub asks again for what it lacks.
var ErrQueueFull = errors.New("aggregate: relay queue full")

// relayQueue holds the updates received on this replica and not yet
// written, per work; guarded by Aggregator.mu.
type relayQueue struct {
	deltas map[workRef]*delta
	bytes  int   // sum of the deltas' bytes
	last   int64 // the last receipt order given (update.ord)
	full   bool  // a drop was logged since the queue last drained
	// written and conflicts count records written and stored revisions
	// found moved, for tests.
	written, conflicts uint64
}

// enqueue queues u for Relay, stamped with its receipt order; with
// Config.Local it holds u at once instead.
func (a *Aggregator) enqueue(cluster, key string, u update) error {
	ref := workRef{cluster, key}
	u.seen = a.cfg.Seen()
	a.mu.Lock()
	defer a.mu.Unlock()
	q := &a.queue
	d := q.deltas[ref]
	sp := a.spendLocked(cluster, a.now())
	if a.cfg.Local && d == nil && sp.take(u.size()) {
		a.holdLocalLocked(ref, u)
		return nil
	}
	var next delta
	if d != nil {
		next = *d
	}
	u.ord = a.nextOrdLocked(cluster, u.seen)
	next.add(u)
	grow := next.bytes
	if d != nil {
		grow -= d.bytes
	}
	if sp.queued+grow > a.cfg.ClusterBudget.MaxQueuedBytes {
		a.cfg.Counts.Add("aggregate", kindClusterQueueFull)
		return fmt.Errorf("%w: cluster %q has %d bytes of acks and reports waiting to be written, at most %d (its budget: %g records and %g bytes a second); work %q",
			ErrClusterQueueFull, cluster, sp.queued, a.cfg.ClusterBudget.MaxQueuedBytes, a.cfg.ClusterBudget.RecordRate, a.cfg.ClusterBudget.ByteRate, key)
	}
	if (d == nil && len(q.deltas) >= a.cfg.MaxQueued) || q.bytes+grow > a.cfg.MaxQueuedBytes {
		a.cfg.Counts.Add("aggregate", kindQueueFull)
		if !q.full {
			q.full = true
			a.log.Warn("relay queue full: updates dropped and their streams ended until etcd catches up",
				"works", len(q.deltas), "bytes", q.bytes, "cluster", cluster, "work", key)
		}
		return fmt.Errorf("%w: work %q of cluster %q", ErrQueueFull, key, cluster)
	}
	q.deltas[ref] = &next
	q.bytes += grow
	sp.queued += grow
	select {
	case a.relayKick <- struct{}{}:
	default:
	}
	return nil
}

// ordShift makes room under a store revision for the updates one replica
// receives while its view of the store stays at that revision: 2^20, so
// orders stay positive up to revision 2^43.
const ordShift = 20

// nextOrdLocked returns the receipt order of an update of cluster received
// now by this replica, which had seen the store at revision seen: above
// every order it gave before (receipt order on this replica), at least seen
// shifted by ordShift (an update received by a replica that had seen more
// of the store is the newer), and above every order held of the cluster
// (a replica that holds another's record received its own update later).
// No clock takes part: replicas' clocks may disagree by any amount. a.mu
// must be held.
func (a *Aggregator) nextOrdLocked(cluster string, seen int64) int64 {
	ord := max(seen<<ordShift, a.queue.last+1, a.maxOrd[cluster]+1)
	a.queue.last = ord
	return ord
}

// requeue puts back updates that could not be written, before whatever
// was queued since.
func (a *Aggregator) requeue(ref workRef, d *delta) {
	a.mu.Lock()
	defer a.mu.Unlock()
	q := &a.queue
	sp := a.spendLocked(ref.cluster, a.now())
	if cur := q.deltas[ref]; cur != nil {
		q.bytes -= cur.bytes
		sp.queued -= cur.bytes
		d = d.then(cur)
	}
	q.deltas[ref] = d
	q.bytes += d.bytes
	sp.queued += d.bytes
	select {
	case a.relayKick <- struct{}{}:
	default:
	}
}

// Relay writes the acks and reports this replica's agents send to the
// store, and follows what every replica wrote into this aggregator's
// memory, until ctx ends (nil). Every replica runs it, leader or not.
// With Config.Local it deletes what an earlier, relaying hub left and
// waits for ctx.
func (a *Aggregator) Relay(ctx context.Context) error {
	if a.cfg.Local {
		a.dropRelayed(ctx)
		a.holdQueued(ctx)
		return nil
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = store.Follow(ctx, a.log.Named("reports"), view.RelistBackoff, a.followReports)
	}()
	a.writeRelayed(ctx)
	wg.Wait()
	return nil
}

// writeRelayed flushes the queue when woken, at most once per
// relayInterval, until ctx ends; then it flushes once more, briefly.
func (a *Aggregator) writeRelayed(ctx context.Context) {
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), relayStopTimeout)
		defer cancel()
		if err := a.flushRelay(sctx); err != nil {
			a.log.Debug("relayed reports not written at stop; agents send them again after reconnecting", "error", err)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.relayKick:
		}
		wait := relayInterval
		err := a.flushRelay(ctx)
		if err != nil && ctx.Err() == nil {
			a.log.Warn("relay reports, retrying", "error", err, "in", relayRetry)
			wait = relayRetry
		}
		if err != nil || a.queuedWorks() > 0 { // failed, or clusters over their budget wait
			select {
			case a.relayKick <- struct{}{}:
			default:
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// pendingWrite is one record to write: what it will hold, and the stored
// revision it replaces (0: none).
type pendingWrite struct {
	ref    workRef
	h      held   // what the record will hold, when exists
	value  []byte // h encoded
	base   int64
	exists bool
}

// flushRelay writes every queued update, merged onto the stored record
// (merge), conditional on its revision. A record another replica wrote
// meanwhile is read back and merged again, up to relayAttempts times.
func (a *Aggregator) flushRelay(ctx context.Context) error {
	queued := a.takeBudgeted()
	refs := make([]workRef, 0, len(queued))
	for ref := range queued {
		refs = append(refs, ref)
	}
	sortRefs(refs)
	bases := make(map[workRef]base, len(refs))
	for _, ref := range refs {
		h, rev, ok := a.held(ref)
		bases[ref] = base{h: h, rev: rev, ok: ok}
	}
	var firstErr error
	for attempt := 0; len(refs) > 0; attempt++ {
		if attempt == relayAttempts || firstErr != nil {
			for _, ref := range refs {
				a.requeue(ref, queued[ref])
			}
			break
		}
		var err error
		refs, err = a.writeOnce(ctx, refs, queued, bases)
		if err != nil {
			firstErr = err
		}
	}
	return firstErr
}

// base is a stored record as last known: held, at revision rev.
type base struct {
	h   held
	rev int64
	ok  bool
}

// writeOnce writes refs in batches; it returns those whose stored record
// moved (bases updated to what is stored now) and those of failed
// batches, with the first error.
func (a *Aggregator) writeOnce(ctx context.Context, refs []workRef, queued map[workRef]*delta, bases map[workRef]base) ([]workRef, error) {
	var again []workRef
	var batch []pendingWrite
	size := 0
	var firstErr error
	commit := func() {
		if len(batch) == 0 {
			return
		}
		moved, err := a.commitRelayed(ctx, batch, bases)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			for _, w := range batch {
				again = append(again, w.ref)
			}
		}
		again = append(again, moved...)
		batch, size = batch[:0], 0
	}
	for _, ref := range refs {
		w, ok, err := a.prepare(ref, queued[ref], bases[ref])
		if err != nil {
			a.log.Warn("relayed report not written", "cluster", ref.cluster, "work", ref.key, "error", err)
			continue
		}
		if !ok {
			a.log.Debug("relayed updates older than the stored record, discarded", "cluster", ref.cluster, "work", ref.key)
			continue
		}
		if len(batch) == relayBatch || size+len(w.value) > relayBatchBytes {
			commit()
		}
		batch = append(batch, w)
		size += len(w.value)
	}
	commit()
	return again, firstErr
}

// prepare merges a work's queued updates onto its stored record; ok is
// false when that changes nothing.
func (a *Aggregator) prepare(ref workRef, d *delta, b base) (pendingWrite, bool, error) {
	h, exists, changed := d.fold(b.h, b.ok)
	if !changed {
		return pendingWrite{}, false, nil
	}
	w := pendingWrite{ref: ref, h: h, base: b.rev, exists: exists}
	if !exists {
		return w, true, nil
	}
	value, err := encodeHeld(h, ref.key, a.cfg.Replica)
	if err != nil {
		return pendingWrite{}, false, err
	}
	w.value = value
	return w, true, nil
}

// commitRelayed writes one batch, each record in its own conditional
// transaction; it returns the records whose stored revision moved, their
// bases set to what is stored now. Records written are held at once (the
// watch brings the same revision later).
func (a *Aggregator) commitRelayed(ctx context.Context, batch []pendingWrite, bases map[workRef]base) ([]workRef, error) {
	ops := make([]clientv3.Op, 0, len(batch))
	for _, w := range batch {
		key := store.ReportKey(w.ref.cluster, w.ref.key)
		do := clientv3.OpDelete(key)
		if w.exists {
			do = clientv3.OpPut(key, string(w.value))
		}
		ops = append(ops, clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(key), "=", w.base)},
			[]clientv3.Op{do}, []clientv3.Op{clientv3.OpGet(key)}))
	}
	resp, err := a.relay.Client().Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, fmt.Errorf("write %d relayed reports: %w", len(batch), err)
	}
	var moved []workRef
	for i, w := range batch {
		sub := resp.Responses[i].GetResponseTxn()
		if sub.GetSucceeded() {
			a.written(w, resp.Header.Revision)
			continue
		}
		moved = append(moved, w.ref)
		bases[w.ref] = a.storedBase(w.ref, sub.GetResponses()[0].GetResponseRange().GetKvs())
	}
	a.mu.Lock()
	a.queue.written += uint64(len(batch) - len(moved))
	a.queue.conflicts += uint64(len(moved))
	a.mu.Unlock()
	return moved, nil
}

// written holds a record this replica just wrote at rev.
func (a *Aggregator) written(w pendingWrite, rev int64) {
	if !w.exists {
		return // the watch forgets it; forgetting here would let an older event back in
	}
	a.hold(w.ref.cluster, w.ref.key, w.h, rev)
}

// storedBase decodes the record a failed compare read back.
func (a *Aggregator) storedBase(ref workRef, kvs []*mvccpb.KeyValue) base {
	if len(kvs) == 0 {
		return base{}
	}
	h, err := decodeHeld(kvs[0].Value)
	if err != nil {
		a.log.Warn("stored relayed report not decodable; replacing it", "cluster", ref.cluster, "work", ref.key, "error", err)
		return base{rev: kvs[0].ModRevision}
	}
	return base{h: h, rev: kvs[0].ModRevision, ok: true}
}

// holdLocalLocked merges u onto what is held for ref (Config.Local);
// a.mu must be held.
func (a *Aggregator) holdLocalLocked(ref workRef, u update) {
	u.ord = a.nextOrdLocked(ref.cluster, u.seen)
	a.mergeLocalLocked(ref, u)
}

// mergeLocalLocked merges u, ordered already, onto what is held for ref
// (Config.Local); a.mu must be held.
func (a *Aggregator) mergeLocalLocked(ref workRef, u update) {
	var h held
	r := a.records[ref.cluster][ref.key]
	if r != nil {
		h = r.h
	}
	out, exists, changed := merge(h, r != nil, u)
	if !changed {
		return
	}
	a.localRev++
	if !exists {
		a.forgetLocked(ref, a.localRev)
		return
	}
	a.holdLocked(ref.cluster, ref.key, out, a.localRev)
}

// dropRelayed deletes the relayed records a hub that relayed (an older
// version) left in a store this hub alone uses: nothing would follow or
// update them. Their agents are asked again for what the hub lacks
// when they reconnect.
func (a *Aggregator) dropRelayed(ctx context.Context) {
	resp, err := a.relay.Client().Delete(ctx, store.ReportsPrefix, clientv3.WithPrefix())
	switch {
	case err != nil && ctx.Err() == nil:
		a.log.Warn("relayed reports left by an earlier hub not deleted", "error", err)
	case err == nil && resp.Deleted > 0:
		a.log.Info("relayed reports left by an earlier hub deleted: this hub holds reports in memory", "records", resp.Deleted)
	}
}

// holdQueued (Config.Local) holds the updates of clusters that were over
// their budget as it refills, at most once per relayInterval, until ctx
// ends.
func (a *Aggregator) holdQueued(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.relayKick:
		}
		queued := a.takeBudgeted()
		a.mu.Lock()
		for _, ref := range sortedRefs(queued) {
			for _, u := range queued[ref].seq {
				a.mergeLocalLocked(ref, u)
			}
		}
		left := len(a.queue.deltas)
		a.mu.Unlock()
		if left > 0 {
			select {
			case a.relayKick <- struct{}{}:
			default:
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(relayInterval):
		}
	}
}

// queuedWorks is how many works have updates queued.
func (a *Aggregator) queuedWorks() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.queue.deltas)
}

// sortRefs sorts refs by cluster, then work key.
func sortRefs(refs []workRef) {
	sort.Slice(refs, func(i, j int) bool {
		return refs[i].cluster < refs[j].cluster || (refs[i].cluster == refs[j].cluster && refs[i].key < refs[j].key)
	})
}
