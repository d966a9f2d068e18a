package detector

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// process reconciles the marked templates until none is left or ctx ends.
// Reconciling may mark more (a parent marks its dependencies). Binding
// writes go on in the background (writes.go): a template whose write is
// in flight waits for it before it is reconciled again.
func (d *Detector) process(ctx context.Context) {
	for len(d.dirty) > 0 && ctx.Err() == nil {
		keys, batch := d.sortedDirty()
		for _, ref := range keys {
			if ctx.Err() != nil {
				return
			}
			d.makeRoom(ctx, ref)
			err := guard.Do(d.log, d.counts, "detector", refString(ref), func() error { return d.reconcile(ctx, ref, batch[ref]) })
			if !errors.Is(err, errWriting) { // else finishOne ends it
				d.done(ctx, ref, batch[ref], err)
			}
		}
	}
}

// done records how reconciling ref ended.
func (d *Detector) done(ctx context.Context, ref store.ObjectRef, cause bind.Cause, err error) {
	if err == nil {
		delete(d.retries, ref)
		return
	}
	if ctx.Err() == nil {
		d.failed(ref, cause, err)
	}
}

// reconcile brings ref's binding and its dependencies' marks in line,
// re-reading the binding and trying again after a write conflict. With
// its binding write in flight it returns errWriting; finishOne completes
// it.
func (d *Detector) reconcile(ctx context.Context, ref store.ObjectRef, cause bind.Cause) error {
	if d.reconciled != nil {
		d.reconciled(ref)
	}
	for attempt := 0; ; attempt++ {
		err := d.reconcileOnce(ctx, ref, cause)
		if !stale(err) || attempt == conflictRetries {
			return err
		}
		if err := d.reread(ctx, ref); err != nil {
			return err
		}
	}
}

// stale says whether err is a write refused because the binding is not as
// the index has it.
func stale(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrNotFound)
}

func (d *Detector) reconcileOnce(ctx context.Context, ref store.ObjectRef, cause bind.Cause) error {
	t := d.idx.templates[ref]
	if t != nil && d.filter.Ignored(t) {
		return nil
	}
	if t != nil {
		if err := d.ensureNamespace(ctx, t); err != nil {
			return err
		}
	}
	cur, exists := d.idx.bindings[ref]
	if t == nil && d.idx.broken.templates[ref] != "" {
		// Undecodable since before this start: never taken as absent.
		if !exists {
			return nil
		}
		t = &bind.Template{Ref: ref}
		want := bind.Want{Keep: true, RequiredBy: cur.B.Spec.RequiredBy}
		return d.write(ctx, ref, cause, d.report(ref, nil, bind.Merge(cur.B, t, want)), cur, exists)
	}
	want, ok, err := d.want(ctx, t, cur, exists, cause)
	if err != nil {
		return err
	}
	switch {
	case ok:
		err = d.write(ctx, ref, cause, d.report(ref, t, bind.Merge(cur.B, t, want)), cur, exists)
		if errors.Is(err, errWriting) {
			return err // finishOne refreshes the dependencies once written
		}
	case exists:
		err = d.remove(ctx, ref, cur)
	}
	if err != nil {
		return err
	}
	return d.refreshDeps(ctx, ref)
}

// report sets the binding's InputsDecoded condition from the inputs that
// do not decode.
func (d *Detector) report(ref store.ObjectRef, t *bind.Template, b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	setDecodeCondition(b, d.idx.problems(ref, t, bind.ClaimOf(b)))
	return b
}

// want decides ref's binding (the bind stage, bind.Wanted, plus the
// dependency graph's requiredBy); ok is false when it should have none.
func (d *Detector) want(ctx context.Context, t *bind.Template, cur storedBinding, exists bool, cause bind.Cause) (bind.Want, bool, error) {
	if t == nil {
		return bind.Want{}, false, nil
	}
	in := bind.Input{Template: t, OverrideExists: d.idx.overrideExists, Cause: cause, Preemption: d.preemption,
		Undecodable:   func(p bind.PolicyRef) bool { _, ok := d.idx.broken.policies[p]; return ok },
		AutoNamespace: d.namespaces && d.filter.AutoPropagated(t)}
	if exists {
		in.Current = bind.CurrentOf(cur.B)
	}
	in.PPs, in.CPPs = d.idx.policiesFor(t.Ref.Namespace)
	dec, want, err := bind.Wanted(ctx, in, d.interp)
	if err != nil {
		return bind.Want{}, false, err
	}
	parents := d.idx.parentBindings(t.Ref)
	want.RequiredBy = RequiredBy(parents)
	if exists {
		want.RequiredBy = d.idx.keepBrokenParents(want.RequiredBy, cur.B.Spec.RequiredBy)
	}
	log := d.log.With("template", refString(t.Ref))
	switch dec.Verdict {
	case bind.Bind:
		log.Trace("bind", "policy", dec.Policy.Ref.String(), "reason", dec.Reason)
	case bind.Keep:
		log.Trace("keep", "reason", dec.Reason)
	case bind.AutoPropagate:
		log.Trace("auto-propagate", "reason", dec.Reason)
	case bind.Release:
		if in.Current.Claim != nil {
			log.Info("policy no longer applies; binding kept without a claim, its works stay", "policy", in.Current.Claim.Policy.String(), "reason", dec.Reason)
		}
		if in.Current.Auto {
			return d.optedOut(cur, want)
		}
	default:
		if len(want.RequiredBy) == 0 {
			log.Trace("wait", "reason", dec.Reason)
			return bind.Want{}, false, nil
		}
		if len(parents) == 0 {
			want.Keep = true // only parents whose binding does not decode need it
			break
		}
		want.Spec = AttachedSpec(t, parents)
	}
	return want, true, nil
}

// optedOut is the binding of an auto-propagated Namespace that no longer
// is (opted out by label, skipped, or auto-propagation turned off): it
// stays on the clusters it is on, managed, and goes to no other (as in
// Karmada, the opt-out deletes nothing in the members). A binding on no
// cluster yet is deleted: nothing was placed.
func (d *Detector) optedOut(cur storedBinding, want bind.Want) (bind.Want, bool, error) {
	pin, ok := bind.Pinned(cur.B)
	if !ok {
		return want, len(want.RequiredBy) > 0, nil
	}
	want.Pin = pin
	d.log.Info("namespace no longer auto-propagated; kept on the clusters it is on",
		"namespace", cur.B.Spec.Resource.Name, "clusters", pin.ClusterAffinity.ClusterNames)
	return want, true, nil
}

// write stores b, in the background (errWriting), unless the stored
// binding is already equal to it; cause is what the template was marked
// for, kept for a retry.
func (d *Detector) write(ctx context.Context, ref store.ObjectRef, cause bind.Cause, b *workv1alpha1.ResourceBinding, cur storedBinding, exists bool) error {
	data, err := encode(b)
	if err != nil {
		return fmt.Errorf("encode binding of %s: %w", refString(ref), err)
	}
	if exists {
		old, err := encode(cur.B)
		if err == nil && bytes.Equal(old, data) {
			return nil
		}
	}
	d.inflight.start(ctx, d.store, &pendingWrite{ref: ref, cause: cause, b: b, cur: cur, exists: exists}, data)
	return errWriting
}

// written records a binding write that succeeded, unless a newer
// version of the binding came by the watch while it was in flight.
func (d *Detector) written(pw *pendingWrite) {
	if cur, ok := d.idx.bindings[pw.ref]; !ok || cur.Revision < pw.rev {
		d.idx.bindings[pw.ref] = storedBinding{Revision: pw.rev, B: pw.b}
	}
	d.logWrite(pw.ref, pw.b, pw.cur, pw.exists)
}

func (d *Detector) logWrite(ref store.ObjectRef, b *workv1alpha1.ResourceBinding, cur storedBinding, exists bool) {
	log := d.log.With("template", refString(ref), "binding", b.Namespace+"/"+b.Name)
	claim := bind.ClaimOf(b)
	policy := "none (dependency)"
	switch {
	case bind.AutoPropagatedOf(b):
		policy = "none (namespace auto-propagation)"
	case claim != nil:
		policy = claim.Policy.String()
	case b.Spec.Placement != nil:
		policy = "none (released)"
	}
	switch {
	case !exists:
		log.Info("binding created", "policy", policy)
	case !sameClaim(bind.ClaimOf(cur.B), claim):
		log.Info("binding moved", "policy", policy)
	default:
		log.Debug("binding updated", "policy", policy)
	}
}

func sameClaim(a, b *bind.Claim) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// remove deletes ref's binding if it is still the revision the index has.
func (d *Detector) remove(ctx context.Context, ref store.ObjectRef, cur storedBinding) error {
	if _, err := d.store.Delete(ctx, store.BindingKey(ref), cur.Revision); err != nil {
		return err
	}
	delete(d.idx.bindings, ref)
	d.log.Info("binding deleted", "template", refString(ref))
	return nil
}

// reread refreshes the index's copy of ref's binding from the store.
func (d *Detector) reread(ctx context.Context, ref store.ObjectRef) error {
	kv, err := d.store.Get(ctx, store.BindingKey(ref))
	if errors.Is(err, store.ErrNotFound) {
		delete(d.idx.bindings, ref)
		return nil
	}
	if err != nil {
		return err
	}
	b, err := decodeBinding(kv.Value)
	if err != nil {
		return fmt.Errorf("decode binding of %s: %w", refString(ref), err)
	}
	d.idx.bindings[ref] = storedBinding{Revision: kv.Revision, B: b}
	return nil
}

// refreshDeps recomputes what ref needs as a parent (propagateDeps) and
// marks the dependencies whose requiredBy may have changed.
func (d *Detector) refreshDeps(ctx context.Context, ref store.ObjectRef) error {
	t := d.idx.templates[ref]
	sb, ok := d.idx.bindings[ref]
	st := parentState{}
	if ok && propagatesDeps(t, sb.B) && !d.filter.Ignored(t) {
		raw, err := dependencies(ctx, t, d.interp)
		if err != nil {
			return err
		}
		st = parentState{deps: Resolve(ref, raw, d.idx.templatesOf), bindingRev: sb.Revision, selector: hasSelector(raw)}
	}
	for _, dep := range d.idx.setParent(ref, st) {
		d.mark(dep, bind.Cause{})
	}
	return nil
}
