package view

import (
	"context"
	"strings"

	"k8s.io/client-go/tools/cache"

	"github.com/tetherproj/tether/hub/store"
)

// list reads every prefix, paged, as of one revision, and publishes the
// result whole: readers keep the view they had until it is complete. A
// key whose bytes do not decode keeps the value the view held for it, if
// any. It returns the revision listed at.
func (v *View) list(ctx context.Context) (int64, error) {
	fresh := make(map[string]cache.ThreadSafeStore, len(v.prefixes))
	var rev int64
	for _, p := range v.prefixes {
		objs := newObjects(p)
		r, err := v.src.ListEachAt(ctx, p.Prefix, rev, func(kv store.KV) {
			o := v.decode(p, kv, v.held(p.Prefix, kv.Key))
			objs.Add(kv.Key, o)
		})
		if err != nil {
			return 0, err
		}
		rev, fresh[p.Prefix] = r, objs
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.objects, v.rev = fresh, rev
	v.relists.Add(1)
	for s := range v.subs {
		s.note(nil, true)
	}
	v.syncOnce.Do(func() { close(v.synced) })
	v.log.Debug("listed", "revision", rev)
	return rev, nil
}

// held returns the object the view holds at key, nil if none.
func (v *View) held(prefix, key string) *Object {
	v.mu.RLock()
	defer v.mu.RUnlock()
	o, _ := v.objects[prefix].Get(key)
	obj, _ := o.(*Object)
	return obj
}

// decode makes the object of kv; when its bytes do not decode, it keeps
// old's value (if any) with the error.
func (v *View) decode(p Prefix, kv store.KV, old *Object) *Object {
	v.decodes.Add(1)
	val, err := p.Decode(kv.Key, kv.Value)
	o := &Object{Key: kv.Key, Revision: kv.Revision, CreateRevision: kv.CreateRevision, Size: len(kv.Value),
		Value: val, Err: err}
	if err != nil {
		o.Value = nil
		if old != nil {
			o.Value = old.Value
		}
	}
	return o
}

// applyOne applies one watch event under prefix p; v.mu is held.
func (v *View) applyOne(p Prefix, ev store.Event) {
	objs := v.objects[p.Prefix]
	if ev.Type == store.EventDelete {
		objs.Delete(ev.KV.Key)
		return
	}
	old, _ := objs.Get(ev.KV.Key)
	prev, _ := old.(*Object)
	objs.Update(ev.KV.Key, v.decode(p, ev.KV, prev))
}

// prefixOf returns the held prefix key is under.
func (v *View) prefixOf(key string) (Prefix, bool) {
	for _, p := range v.prefixes {
		if strings.HasPrefix(key, p.Prefix) {
			return p, true
		}
	}
	return Prefix{}, false
}

// Synced is closed once the first list is complete.
func (v *View) Synced() <-chan struct{} { return v.synced }

// Revision is the store revision the view holds: every change up to it
// is in the view.
func (v *View) Revision() int64 {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.rev
}

// Relists is how many complete lists the view has published (1 after the
// first; one more after each watch failure).
func (v *View) Relists() int64 { return v.relists.Load() }

// Decodes is how many stored values the view has decoded.
func (v *View) Decodes() int64 { return v.decodes.Load() }

// Get returns the object at key.
func (v *View) Get(key string) (*Object, bool) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	p, ok := v.prefixOf(key)
	if !ok {
		return nil, false
	}
	o, ok := v.objects[p.Prefix].Get(key)
	if !ok {
		return nil, false
	}
	return o.(*Object), true
}

// Snapshot is the objects under held prefixes as of one revision.
type Snapshot struct {
	Revision int64
	Objects  []*Object
}

// Snapshot returns every object under the prefixes given (held ones, or
// prefixes under one), as of the view's revision.
func (v *View) Snapshot(prefixes ...string) Snapshot {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return Snapshot{Revision: v.rev, Objects: v.listLocked(prefixes)}
}

// listLocked returns the objects under prefixes, each a held prefix or
// under one; v.mu is held.
func (v *View) listLocked(prefixes []string) []*Object {
	var out []*Object
	for _, prefix := range prefixes {
		held, ok := v.prefixOf(prefix)
		if !ok {
			continue
		}
		for _, o := range v.objects[held.Prefix].List() {
			if obj := o.(*Object); strings.HasPrefix(obj.Key, prefix) {
				out = append(out, obj)
			}
		}
	}
	return out
}

// ByIndex returns the objects under prefix whose index name has value.
func (v *View) ByIndex(prefix, name, value string) ([]*Object, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	objs, ok := v.objects[prefix]
	if !ok {
		return nil, nil
	}
	items, err := objs.ByIndex(name, value)
	if err != nil {
		return nil, err
	}
	out := make([]*Object, len(items))
	for i, o := range items {
		out[i] = o.(*Object)
	}
	return out, nil
}
