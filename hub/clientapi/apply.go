package clientapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/store"
)

// Objects implements hubv1.ObjectServiceServer.
type Objects struct {
	hubv1.UnimplementedObjectServiceServer
	b *backend
}

// Apply validates every object, then stores them all or none.
func (o *Objects) Apply(ctx context.Context, req *hubv1.ApplyRequest) (*hubv1.ApplyResponse, error) {
	c, err := o.b.authorize(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	resp, err := o.b.apply(ctx, req, c)
	return resp, grpcStatus(err)
}

// plan is what Apply does, or would do, with one valid object.
type plan struct {
	it      *item
	outcome hubv1.ApplyOutcome
	// value is the JSON to store; for UNCHANGED, the stored one.
	value []byte
	// prev is the stored value and prevRev its revision; nil and 0 when new.
	prev    []byte
	prevRev int64
	// rev is the object's revision once written (or its current one).
	rev int64
	// err is why its write failed; skipped: not written, because another
	// write failed first (commit).
	err     error
	skipped bool
}

func (b *backend) apply(ctx context.Context, req *hubv1.ApplyRequest, c caller) (*hubv1.ApplyResponse, error) {
	docs, err := parseManifests(req.GetManifests(), b.cfg.MaxManifestBytes)
	if err != nil {
		return nil, err
	}
	if err := mayRunScripts(c, docs); err != nil {
		return nil, err
	}
	ns := req.GetDefaultNamespace()
	if ns == "" {
		ns = "default"
	}
	items, err := b.prepare(ctx, docs, ns, false)
	if err != nil {
		return nil, err
	}
	if err := mayAll(c, roles.Write, items); err != nil {
		return nil, err
	}
	now := time.Now()
	if !req.GetDryRun() && !anyRejected(items) {
		if resp, err := b.applyLocal(ctx, items, now); resp != nil || err != nil {
			return resp, err
		}
	}
	plans, err := b.plan(ctx, items, now, b.st.GetAll)
	if err != nil {
		return nil, err
	}
	if err := b.checkQuotas(ctx, items, plans); err != nil {
		return nil, err
	}
	if req.GetDryRun() || anyRejected(items) {
		return response(items, plans, notStored, 0), nil
	}
	rev, complete, err := b.commit(ctx, plans)
	if err != nil {
		return nil, err
	}
	return response(items, plans, storedIf(complete), rev), nil
}

// applyLocal is Apply's fast path. It plans from local reads (one
// store.GetLocalAll for every object), which do not wait behind the writes
// etcd is persisting the way a quorum read does: on a busy hub a quorum read
// waits for the write-ahead log's fsyncs in progress, so it cost as much as
// the write itself. What was read is then checked before anything is kept: a
// single write by its own compare (the object is still absent, or still at
// the revision read); anything else (several writes, an UNCHANGED outcome)
// first by store.Unchanged, one quorum round for all objects. It returns
// nil, nil when it cannot answer from what it read (a read that was stale or
// overtaken, an object too large): apply then plans again from quorum reads,
// as if this had not run.
func (b *backend) applyLocal(ctx context.Context, items []*item, now time.Time) (*hubv1.ApplyResponse, error) {
	plans, tooLarge, err := b.planAll(ctx, items, now, b.getLocal)
	if err != nil || len(tooLarge) > 0 {
		return nil, err
	}
	if quotas, err := b.quotasMayApply(ctx, items, plans); err != nil || quotas {
		return nil, err // apply's quorum path checks them
	}
	writes := 0
	for _, p := range plans {
		if p.outcome != hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED {
			writes++
		}
	}
	if writes != 1 || len(plans) != 1 {
		if ok, err := b.st.Unchanged(ctx, planned(plans)); err != nil || !ok {
			return nil, err
		}
	}
	rev, complete, err := b.commit(ctx, plans)
	if errors.Is(err, ErrConcurrent) {
		return nil, nil // nothing was written: plan again from quorum reads
	}
	if err != nil {
		return nil, err
	}
	return response(items, plans, storedIf(complete), rev), nil
}

// planned maps the store key of every plan to the revision it was planned
// from (0: absent).
func planned(plans map[*item]*plan) map[string]int64 {
	out := make(map[string]int64, len(plans))
	for it, p := range plans {
		out[store.ObjectKey(it.key)] = p.prevRev
	}
	return out
}

func anyRejected(items []*item) bool {
	for _, it := range items {
		if it.rejected() {
			return true
		}
	}
	return false
}

// getter reads the stored values of keys, absent ones left out:
// store.GetAll or store.GetLocalAll.
type getter func(ctx context.Context, keys []string) (map[string]store.KV, error)

// plan reads the stored version of every valid object with get and decides
// its outcome; an object too large once stored is rejected here.
func (b *backend) plan(ctx context.Context, items []*item, now time.Time, get getter) (map[*item]*plan, error) {
	plans, tooLarge, err := b.planAll(ctx, items, now, get)
	for it, msg := range tooLarge {
		it.reject(msg)
	}
	return plans, err
}

// planAll is plan without the rejections: it returns why each object too
// large once stored is, and plans the others. It reads every object in
// one request: one after the other, an Apply of a hundred templates on a
// busy hub spent most of its time in reads (issue 16).
func (b *backend) planAll(ctx context.Context, items []*item, now time.Time, get getter) (map[*item]*plan, map[*item]string, error) {
	var keys []string
	for _, it := range items {
		if !it.rejected() {
			keys = append(keys, store.ObjectKey(it.key))
		}
	}
	stored, err := get(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	plans, tooLarge := map[*item]*plan{}, map[*item]string{}
	for _, it := range items {
		if it.rejected() {
			continue
		}
		kv, found := stored[store.ObjectKey(it.key)]
		p, err := planOne(it, now, kv, found)
		if err != nil {
			return nil, nil, err
		}
		if p.outcome != hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED && len(p.value) > b.cfg.MaxObjectBytes {
			tooLarge[it] = fmt.Sprintf("%s is too large: %d bytes as stored, the limit is %d bytes (%s)",
				describe(it.ref), len(p.value), b.cfg.MaxObjectBytes, mib(b.cfg.MaxObjectBytes))
			continue
		}
		plans[it] = p
	}
	return plans, tooLarge, nil
}

// planOne decides the outcome for it from kv, its stored version when
// found.
func planOne(it *item, now time.Time, kv store.KV, found bool) (*plan, error) {
	p := &plan{it: it, outcome: hubv1.ApplyOutcome_APPLY_OUTCOME_CREATED}
	var prev map[string]any
	var err error
	if found {
		if prev, err = decodeObject(kv.Value); err != nil {
			return nil, fmt.Errorf("stored %s: %w", store.ObjectKey(it.key), err)
		}
		p.prev, p.prevRev, p.rev = kv.Value, kv.Revision, kv.Revision
		p.outcome = hubv1.ApplyOutcome_APPLY_OUTCOME_CONFIGURED
		if sameContent(prev, it.obj) {
			p.outcome, p.value = hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED, kv.Value
			return p, nil
		}
	}
	if p.value, err = json.Marshal(withHubStatus(it.key, withHubMetadata(it.obj, prev, now), prev)); err != nil {
		return nil, fmt.Errorf("encode %s: %w", describe(it.ref), err)
	}
	return p, nil
}

// maxApplyWrites bounds the writes of one Apply in flight at once: one
// after the other, a request of a hundred templates on a busy hub waited a
// hundred store round trips (issue 16); together, etcd commits them in a
// few rounds.
const maxApplyWrites = 16

// commit writes every created and changed object, each only if nobody
// changed it since plan read it, in dependency order: tier after tier
// (tiers, order.go), the objects of one tier up to maxApplyWrites at once.
// Each object gets a revision of its own (objects of one etcd transaction
// would share one, and a Watch resumes after the last revision it
// yielded), so a Namespace's or a CRD's is lower than those of the objects
// in it. When a write fails, no write starts after it; the writes made
// stay (written), the failed ones keep their error, the others are
// skipped. The store has no multi-key transaction, and undoing would
// delete or roll back what watchers may already act on.
//
// It returns an error only when nothing was written: the first write's
// error (ErrConcurrent when another writer won). Otherwise it returns the
// newest revision written (or of the objects, when nothing changed) and
// whether every write was made.
func (b *backend) commit(ctx context.Context, plans map[*item]*plan) (rev int64, complete bool, err error) {
	var failed atomic.Bool // once set, writes not yet started are not made
	var firstErr error
	var mu sync.Mutex // guards firstErr
	for _, tier := range tiers(plans) {
		var g errgroup.Group
		g.SetLimit(maxApplyWrites)
		for _, p := range tier {
			g.Go(func() error {
				if failed.Load() {
					p.skipped = true
					return nil
				}
				if p.err = b.write(ctx, p); p.err != nil {
					failed.Store(true)
					mu.Lock()
					firstErr = cmp.Or(firstErr, p.err)
					mu.Unlock()
				}
				return nil // each write keeps its own outcome
			})
		}
		_ = g.Wait()
	}
	written := false
	for _, p := range plans {
		if p.err == nil && !p.skipped {
			rev = max(rev, p.rev)
			written = written || p.outcome != hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED
		}
	}
	if firstErr != nil && !written {
		return 0, false, firstErr
	}
	return rev, firstErr == nil, nil
}

// write stores p's object if nobody changed it since plan read it, and
// sets p.rev.
func (b *backend) write(ctx context.Context, p *plan) error {
	var err error
	if p.outcome == hubv1.ApplyOutcome_APPLY_OUTCOME_CREATED {
		p.rev, err = b.st.Create(ctx, store.ObjectKey(p.it.key), p.value)
	} else {
		p.rev, err = b.st.Update(ctx, store.ObjectKey(p.it.key), p.value, p.prevRev)
	}
	switch {
	case errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%w: %s changed while this request was applied, it was not written: %v", ErrConcurrent, describe(p.it.ref), err)
	case err != nil:
		return fmt.Errorf("store %s: %w", describe(p.it.ref), err)
	}
	return nil
}

// orderedPlans returns the plans in input order.
func orderedPlans(plans map[*item]*plan) []*plan {
	out := make([]*plan, 0, len(plans))
	for _, p := range plans {
		out = append(out, p)
	}
	for i := 1; i < len(out); i++ { // insertion sort: inputs are small
		for j := i; j > 0 && out[j].it.doc.index < out[j-1].it.doc.index; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// stored says how much of a request was written.
type stored int

const (
	notStored    stored = iota // a dry run, or an object was rejected
	allStored                  // every write was made
	partlyStored               // a write failed; the ones before it stay
)

func storedIf(complete bool) stored {
	if complete {
		return allStored
	}
	return partlyStored
}

// response reports every object in input order.
func response(items []*item, plans map[*item]*plan, st stored, rev int64) *hubv1.ApplyResponse {
	resp := &hubv1.ApplyResponse{Committed: st == allStored, Partial: st == partlyStored, Revision: rev}
	for _, it := range items {
		r := &hubv1.ApplyResult{Ref: it.ref, FieldErrors: it.errs, Message: it.message}
		p := plans[it]
		switch {
		case it.rejected() || p == nil:
			r.Outcome = hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED
		case p.err != nil:
			r.Outcome, r.Message = hubv1.ApplyOutcome_APPLY_OUTCOME_FAILED, fmt.Sprintf("%s not written: %v", describe(it.ref), p.err)
		case p.skipped:
			r.Outcome = hubv1.ApplyOutcome_APPLY_OUTCOME_SKIPPED
			r.Message = fmt.Sprintf("%s not written: a write before it failed", describe(it.ref))
		default:
			r.Outcome, r.ObjectJson = p.outcome, p.value
			r.Message = fmt.Sprintf("%s %s", describe(it.ref), outcomeWord(p.outcome, st != notStored))
			if st != notStored {
				r.Revision = p.rev
				if obj, err := withRevision(p.value, p.rev); err == nil {
					r.ObjectJson, _ = json.Marshal(obj)
				}
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

func outcomeWord(o hubv1.ApplyOutcome, committed bool) string {
	word := strings.ToLower(strings.TrimPrefix(o.String(), "APPLY_OUTCOME_"))
	if !committed {
		word += " (not stored)"
	}
	return word
}

// describe names an object as kubectl does: kind.group/namespace/name.
func describe(r *hubv1.ObjectRef) string {
	s := strings.ToLower(r.GetKind())
	if g, _, ok := strings.Cut(r.GetApiVersion(), "/"); ok {
		s += "." + g
	}
	if r.GetNamespace() != "" {
		return s + " " + r.GetNamespace() + "/" + r.GetName()
	}
	return s + " " + r.GetName()
}

func mib(n int) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", float64(n)/(1<<20)), "0"), ".") + " MiB"
}
