package detector

import (
	"maps"
	"slices"
	"strings"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/overrides"
)

// apply updates the index with one change of the view, as of revision
// rev, and marks the templates it may concern.
func (d *Detector) apply(c view.Change, rev int64) {
	ref, ok := store.ParseObjectKey(c.Key)
	if !ok {
		return
	}
	if strings.HasPrefix(c.Key, store.BindingsPrefix) {
		d.applyBinding(ref, c, rev)
		return
	}
	switch {
	case isPolicyKey(ref):
		d.applyPolicy(ref, c.Object)
	case isOverrideKey(ref):
		d.applyOverride(ref, c.Object)
	case bind.OwnGroup(ref):
		// customizations, clusters...: not templates.
	default:
		d.applyTemplate(ref, c.Object)
	}
}

// applyTemplate keeps the index's template. One that does not decode keeps
// its last good value (none after a restart: its binding is then kept as
// it is) and is reported on its binding.
func (d *Detector) applyTemplate(ref store.ObjectRef, o *view.Object) {
	delete(d.idx.broken.templates, ref)
	if o == nil {
		delete(d.idx.templates, ref)
	} else {
		t, err := templateOf(ref, o)
		if err != nil {
			d.decodeFailed("template", o.Key, err)
			d.idx.broken.templates[ref] = err.Error()
		} else {
			d.idx.templates[ref] = t
		}
	}
	d.mark(ref, bind.Cause{})
	for _, p := range d.idx.selectorParents(ref.Namespace) {
		d.mark(p, bind.Cause{})
	}
}

// applyPolicy marks the templates the old or the new policy matches and
// those it claims, with the policy as the cause. A policy that does not
// decode keeps its last good value (or, after a restart, keeps the
// bindings it claims as they are) and is reported on those bindings.
func (d *Detector) applyPolicy(ref store.ObjectRef, o *view.Object) {
	pr := policyRefOf(ref)
	old := d.idx.policies[pr]
	delete(d.idx.broken.policies, pr)
	var cur *bind.Policy
	if o != nil {
		p, err := policyOf(ref, o)
		if err != nil {
			d.decodeFailed("policy", o.Key, err)
			d.idx.broken.policies[pr] = err.Error()
			d.markClaimed(pr, bind.Cause{})
			return
		}
		cur = p
	}
	if cur == nil {
		delete(d.idx.policies, pr)
	} else {
		d.idx.policies[pr] = cur
	}
	if d.loading {
		return
	}
	cause := bind.Cause{Policies: map[bind.PolicyRef]bool{pr: true}}
	for _, t := range d.idx.templates {
		if matches(old, t) || matches(cur, t) {
			d.mark(t.Ref, cause)
		}
	}
	d.markClaimed(pr, cause)
}

// markClaimed marks the templates whose bindings pr claims.
func (d *Detector) markClaimed(pr bind.PolicyRef, cause bind.Cause) {
	if d.loading {
		return
	}
	for _, k := range d.idx.claimedBy(pr) {
		d.mark(k, cause)
	}
}

func matches(p *bind.Policy, t *bind.Template) bool {
	return p != nil && overrides.MatchesResource(t.Obj, p.Spec.ResourceSelectors...)
}

// applyOverride records whether an override policy exists and marks the
// templates of policies that wait for dependent overrides.
// An override policy that does not decode still exists; it is reported on
// the bindings of the templates its last good selectors select.
func (d *Detector) applyOverride(ref store.ObjectRef, o *view.Object) {
	key := [2]string{ref.Namespace, ref.Name}
	_, wasBroken := d.idx.broken.overrides[key]
	delete(d.idx.broken.overrides, key)
	if o == nil {
		delete(d.idx.overrides, key)
		delete(d.idx.overrideSelectors, key)
	} else {
		d.idx.overrides[key] = true
		if sel, err := overrideSelectorsOf(o); err != nil {
			d.decodeFailed("override policy", o.Key, err)
			d.idx.broken.overrides[key] = err.Error()
		} else {
			d.idx.overrideSelectors[key] = sel
		}
	}
	if d.loading {
		return
	}
	if _, isBroken := d.idx.broken.overrides[key]; isBroken || wasBroken {
		d.markNamespace(ref.Namespace)
	}
	for _, p := range d.idx.policies {
		if len(p.Spec.DependentOverrides) == 0 {
			continue
		}
		for _, t := range d.idx.templates {
			if matches(p, t) {
				d.mark(t.Ref, bind.Cause{})
			}
		}
	}
}

// applyBinding keeps the index's copy of a binding current. The detector's
// own writes are already in the index at their revision, so their echoes
// change nothing; anyone else's change (the scheduler's clusters, a user
// deleting a binding) marks the template, except hub/aggregate's writes of
// the binding's aggregated status (placement.AggregateOnly), several per
// binding while its replicas get ready, which change nothing it decides.
// A binding absent from the view as of rev is gone, unless the index holds
// a newer one (the detector's own write, which the view has not seen yet).
// The view's binding is kept as it is, shared: bind.Merge copies what it
// changes.
func (d *Detector) applyBinding(ref store.ObjectRef, c view.Change, rev int64) {
	cur, ok := d.idx.bindings[ref]
	o := c.Object
	if o == nil {
		delete(d.idx.broken.bindings, [2]string{ref.Namespace, bind.BindingName(ref.Kind, ref.Name)})
		if !ok || cur.Revision > rev {
			return
		}
		delete(d.idx.bindings, ref)
		d.mark(ref, bind.Cause{})
		return
	}
	if ok && cur.Revision >= o.Revision {
		return
	}
	name := [2]string{ref.Namespace, bind.BindingName(ref.Kind, ref.Name)}
	if err := o.Err; err != nil {
		// The last good copy, if any, stays; a write over it conflicts
		// and is retried, so the undecodable value is never overwritten
		// nor taken as absent. Its dependencies keep it in their
		// requiredBy (keepBrokenParents).
		d.decodeFailed("binding", o.Key, err)
		d.idx.broken.bindings[name] = err.Error()
		return
	}
	b := o.Value.(*workv1alpha1.ResourceBinding)
	delete(d.idx.broken.bindings, name)
	d.idx.bindings[ref] = storedBinding{Revision: o.Revision, B: b}
	if ok && placement.AggregateOnly(cur.B, b) {
		return // the aggregator's status: nothing the detector decides on
	}
	d.mark(ref, bind.Cause{})
}

// markNamespace marks the templates of namespace ns (every template when
// ns is "").
func (d *Detector) markNamespace(ns string) {
	for ref := range d.idx.templates {
		if ns == "" || ref.Namespace == ns {
			d.mark(ref, bind.Cause{})
		}
	}
}

// mark queues ref for reconciling, merging cause with any pending one.
func (d *Detector) mark(ref store.ObjectRef, cause bind.Cause) {
	d.dirty[ref] = mergeCause(d.dirty[ref], cause)
}

func mergeCause(a, b bind.Cause) bind.Cause {
	if len(b.Policies) == 0 {
		return a
	}
	out := bind.Cause{Policies: maps.Clone(a.Policies)}
	if out.Policies == nil {
		out.Policies = map[bind.PolicyRef]bool{}
	}
	maps.Copy(out.Policies, b.Policies)
	return out
}

// sortedDirty takes the marked templates, in key order so that logs and
// writes are deterministic.
func (d *Detector) sortedDirty() ([]store.ObjectRef, map[store.ObjectRef]bind.Cause) {
	batch := d.dirty
	d.dirty = map[store.ObjectRef]bind.Cause{}
	keys := slices.SortedFunc(maps.Keys(batch), compareRefs)
	return keys, batch
}

func refString(r store.ObjectRef) string {
	s := r.Kind + " " + r.Name
	if r.Namespace != "" {
		s = r.Kind + " " + r.Namespace + "/" + r.Name
	}
	if r.Group != "" {
		s = r.Group + "/" + s
	}
	return s
}
