package faults

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// relistPause is how long a member watch waits before listing again after
// its watch ended (an API server that went away): short enough to see the
// server's return within a second.
const relistPause = 500 * time.Millisecond

// Object names one object in one member.
type Object struct {
	Cluster   string
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
}

func (o Object) String() string {
	return fmt.Sprintf("%s: %s %s/%s", o.Cluster, o.Resource.Resource, o.Namespace, o.Name)
}

// Delete is one spurious delete the watcher saw: a DELETED event, an
// object whose UID changed (deleted and re-created), or one missing when
// the watcher listed again after losing its watch.
type Delete struct {
	Object
	At  time.Time
	How string
}

// State is an object as last seen in a member.
type State struct {
	UID      types.UID
	Replicas int64 // spec.replicas, -1 without one
}

// Watcher watches every kind the works place, in every member, and counts
// the deletes of the objects it tracks. It runs until its context ends;
// Wait waits for its goroutines.
type Watcher struct {
	mu       sync.Mutex // guards the fields below
	seen     map[Object]State
	deletes  []Delete
	expected map[string]bool // names whose deletes a scenario asked for
	deleted  map[Object]bool // expected objects deleted, to see them return
	recreate []Delete        // expected objects that came back after their deletion

	wg sync.WaitGroup
}

// Member is one cluster to watch.
type Member struct {
	Name   string
	Client dynamic.Interface
}

// Tracked is the kind and name of an object the works place.
type Tracked struct {
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
}

// Watch starts a watch per member and resource of tracked; ctx stops them.
func Watch(ctx context.Context, members []Member, tracked []Tracked) *Watcher {
	w := &Watcher{seen: map[Object]State{}, expected: map[string]bool{}, deleted: map[Object]bool{}}
	byRes := map[schema.GroupVersionResource]map[string]Tracked{}
	for _, t := range tracked {
		if byRes[t.Resource] == nil {
			byRes[t.Resource] = map[string]Tracked{}
		}
		byRes[t.Resource][t.Namespace+"/"+t.Name] = t
	}
	for _, m := range members {
		for res, names := range byRes {
			w.wg.Add(1)
			go w.run(ctx, m, res, names)
		}
	}
	return w
}

// Expect excludes deletes of objects called name from the count: the
// scenario deletes them on purpose.
func (w *Watcher) Expect(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expected[name] = true
}

// Wait waits until every watch has stopped (after the context's end).
func (w *Watcher) Wait() { w.wg.Wait() }

// Deletes returns the spurious deletes seen so far.
func (w *Watcher) Deletes() []Delete {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Delete(nil), w.deletes...)
}

// Recreates returns the objects whose deletes were expected that came
// back after being deleted (How says so).
func (w *Watcher) Recreates() []Delete {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Delete(nil), w.recreate...)
}

// Snapshot returns the tracked objects present in the members now.
func (w *Watcher) Snapshot() map[Object]State {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[Object]State, len(w.seen))
	for k, v := range w.seen {
		out[k] = v
	}
	return out
}

func (w *Watcher) run(ctx context.Context, m Member, res schema.GroupVersionResource, names map[string]Tracked) {
	defer w.wg.Done()
	for ctx.Err() == nil {
		w.once(ctx, m, res, names)
		select {
		case <-ctx.Done():
		case <-time.After(relistPause):
		}
	}
}

// once lists, reconciles what it knew with the list, then watches from the
// list's revision until the watch ends.
func (w *Watcher) once(ctx context.Context, m Member, res schema.GroupVersionResource, names map[string]Tracked) {
	ri := m.Client.Resource(res)
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return // the API server is away: list again later
	}
	w.relisted(m.Name, res, names, list.Items)
	wi, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), AllowWatchBookmarks: true})
	if err != nil {
		return
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || names[u.GetNamespace()+"/"+u.GetName()].Name == "" {
			continue
		}
		o := Object{m.Name, res, u.GetNamespace(), u.GetName()}
		switch ev.Type {
		case watch.Added, watch.Modified:
			w.observe(o, u, time.Now())
		case watch.Deleted:
			w.gone(o, time.Now(), "DELETED event")
		}
	}
}

// relisted folds a fresh list into what the watcher knew: a tracked object
// it had seen that is missing now was deleted while it was not watching.
func (w *Watcher) relisted(cluster string, res schema.GroupVersionResource, names map[string]Tracked, items []unstructured.Unstructured) {
	now := time.Now()
	present := map[Object]bool{}
	for i := range items {
		u := &items[i]
		if names[u.GetNamespace()+"/"+u.GetName()].Name == "" {
			continue
		}
		o := Object{cluster, res, u.GetNamespace(), u.GetName()}
		present[o] = true
		w.observe(o, u, now)
	}
	for _, t := range names {
		o := Object{cluster, res, t.Namespace, t.Name}
		if !present[o] {
			w.gone(o, now, "missing at re-list")
		}
	}
}

// observe records an object's state; a UID other than the one seen before
// means it was deleted and re-created.
func (w *Watcher) observe(o Object, u *unstructured.Unstructured, at time.Time) {
	replicas, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		replicas = -1
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.deleted[o] {
		w.recreate = append(w.recreate, Delete{o, at, "re-created as " + string(u.GetUID())})
		delete(w.deleted, o)
	}
	if old, ok := w.seen[o]; ok && old.UID != u.GetUID() && !w.expected[o.Name] {
		w.deletes = append(w.deletes, Delete{o, at, fmt.Sprintf("UID changed %s -> %s", old.UID, u.GetUID())})
	}
	w.seen[o] = State{UID: u.GetUID(), Replicas: replicas}
}

// gone records that an object is no longer in its member.
func (w *Watcher) gone(o Object, at time.Time, how string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.seen[o]; !ok {
		return
	}
	delete(w.seen, o)
	if w.expected[o.Name] {
		w.deleted[o] = true
		return
	}
	w.deletes = append(w.deletes, Delete{o, at, how})
}
