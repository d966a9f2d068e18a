package detector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// maxInFlight is how many binding writes are in flight at once.
const maxInFlight = 16

// errWriting is reconcile's answer while the template's binding write is
// in flight: finishOne completes the reconcile once the write returns.
var errWriting = errors.New("detector: binding write in flight")

// writes are the binding writes in flight while the session goes on
// applying events and reconciling other templates: one after the other,
// each cost a store round (tens of milliseconds on a busy hub, and a
// thousand new templates made the detector a queue of them). The session
// finishes each write when it returns (finishOne); a template is not
// reconciled again while its write is in flight.
type writes struct {
	wg sync.WaitGroup
	// done receives every write once it returned; never more than
	// maxInFlight are pending, so a send never blocks.
	done    chan *pendingWrite
	pending map[store.ObjectRef]*pendingWrite
}

// pendingWrite is one binding write and, once returned, its outcome.
type pendingWrite struct {
	ref    store.ObjectRef
	cause  bind.Cause
	b      *workv1alpha1.ResourceBinding
	cur    storedBinding
	exists bool
	rev    int64
	err    error
}

func newWrites() *writes {
	return &writes{done: make(chan *pendingWrite, maxInFlight), pending: map[store.ObjectRef]*pendingWrite{}}
}

// start writes pw's binding in the background: a create of data, its
// encoding, or an update of the revision the index has.
func (w *writes) start(ctx context.Context, st *store.Store, pw *pendingWrite, data []byte) {
	w.pending[pw.ref] = pw
	w.wg.Go(func() {
		key := store.BindingKey(pw.ref)
		if pw.exists {
			pw.rev, pw.err = update(ctx, st, key, pw)
		} else {
			pw.rev, pw.err = st.Create(ctx, key, data)
		}
		w.done <- pw
	})
}

// update writes pw.b over the stored revision pw.cur.Revision with the
// aggregated status items stored there, which the index does not keep
// (decodeBinding). A binding stored at another revision is a conflict, as
// the update itself would be.
func update(ctx context.Context, st *store.Store, key string, pw *pendingWrite) (int64, error) {
	kv, err := st.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	if kv.Revision != pw.cur.Revision {
		return 0, store.ErrConflict
	}
	var stored struct {
		Status struct {
			AggregatedStatus []configv1alpha1.AggregatedStatusItem `json:"aggregatedStatus"`
		} `json:"status"`
	}
	if err := json.Unmarshal(kv.Value, &stored); err != nil {
		return 0, fmt.Errorf("decode the stored binding %s: %w", key, err)
	}
	b := *pw.b
	b.Status.AggregatedStatus = stored.Status.AggregatedStatus
	data, err := encode(&b)
	if err != nil {
		return 0, fmt.Errorf("encode binding %s: %w", key, err)
	}
	return st.Update(ctx, key, data, pw.cur.Revision)
}

// makeRoom finishes writes as they return until fewer than maxInFlight
// are in flight and none of them is ref's.
func (d *Detector) makeRoom(ctx context.Context, ref store.ObjectRef) {
	w := d.inflight
	for _, busy := w.pending[ref]; busy || len(w.pending) >= maxInFlight; _, busy = w.pending[ref] {
		d.finishOne(ctx, <-w.done)
	}
}

// finishReady finishes the writes that have returned, without waiting.
func (d *Detector) finishReady(ctx context.Context) {
	for {
		select {
		case pw := <-d.inflight.done:
			d.finishOne(ctx, pw)
		default:
			return
		}
	}
}

// finishOne completes the reconcile of a returned write: a written
// binding is recorded and its dependencies refreshed; one refused as
// stale is read again and its template marked again (reconcile's retries:
// each write conflict costs an attempt, up to conflictRetries, then the
// template waits for its retry); another failure waits for the retry.
func (d *Detector) finishOne(ctx context.Context, pw *pendingWrite) {
	ref := pw.ref
	delete(d.inflight.pending, ref)
	err := pw.err
	switch {
	case err == nil:
		d.written(pw)
		err = guard.Do(d.log, d.counts, "detector", refString(ref), func() error { return d.refreshDeps(ctx, ref) })
	case stale(err) && d.conflicts[ref] < conflictRetries:
		d.conflicts[ref]++
		if err = d.reread(ctx, ref); err == nil {
			d.mark(ref, pw.cause)
			return
		}
	}
	delete(d.conflicts, ref)
	d.done(ctx, ref, pw.cause, err)
}
