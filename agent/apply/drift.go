package apply

import (
	"context"
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// fightWindow is how long after a repair another drift of the same work
// counts as the same fight: its backoff keeps growing (client-go's default
// controller limiter: 5 ms doubling up to 1000 s, and 10 repairs/s overall).
// A drift after a quiet minute starts again at 5 ms.
const fightWindow = time.Minute

// watcher holds one informer per applied GVR, filtered by the ownership
// label, and the drift repair queue. Its informers are client-go's shared
// informers over the dynamic client, built here rather than by
// dynamicinformer, whose package links client-go's typed informers and
// clientset for every API group into the agent (agent/kube says why
// that matters).
type watcher struct {
	a    *Applier
	dyn  dynamic.Interface
	kick chan struct{} // capacity 1: a new informer wants starting

	// mu guards informers, started, waited, queue, pending and lastRepair.
	mu        sync.Mutex
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
	// started holds the informers run has started.
	started map[schema.GroupVersionResource]bool
	// waited holds the kinds whose first list a write has waited for
	// (awaitFirstSync).
	waited map[schema.GroupVersionResource]bool
	// queue is the repair queue; nil outside run.
	queue workqueue.TypedRateLimitingInterface[string]
	// pending holds the keys queued and not yet taken, so that a burst of
	// events for one drift counts once against the backoff.
	pending    map[string]bool
	lastRepair map[string]time.Time
}

func newWatcher(dyn dynamic.Interface, a *Applier) *watcher {
	return &watcher{
		a:          a,
		dyn:        dyn,
		kick:       make(chan struct{}, 1),
		informers:  map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		started:    map[schema.GroupVersionResource]bool{},
		waited:     map[schema.GroupVersionResource]bool{},
		pending:    map[string]bool{},
		lastRepair: map[string]time.Time{},
	}
}

// add makes sure objects of gvr are watched.
func (w *watcher) add(gvr schema.GroupVersionResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.informers[gvr]; ok {
		return
	}
	inf := w.newInformer(gvr)
	_ = inf.SetTransform(stripCached) // fails only on a started informer; this one is new
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(gvr, nil, obj) },
		UpdateFunc: func(old, obj any) { w.observe(gvr, old, obj) },
		DeleteFunc: func(obj any) { w.gone(gvr, obj) },
	})
	w.informers[gvr] = inf
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// firstSyncWait bounds how long the writes of a kind's first objects
// wait for the kind's new drift informer to list (once per kind): the
// list of Tether's own objects of a kind takes milliseconds and saves a
// GET per object until it is there. The list of a kind the API server
// serves only a moment after its CRD is Established may take the
// informer's retry (some 800 ms); a new CRD's first objects are then
// read first, as before, after this wait.
const firstSyncWait = 250 * time.Millisecond

// firstSyncPoll is how often that wait looks.
const firstSyncPoll = 5 * time.Millisecond

// awaitFirstSync watches gvr, if nothing does yet, and while the watcher
// runs waits for the informer's first list, once per kind and at most
// firstSyncWait: a write then knows from the cache that an object is new
// (cachedAbsent) and reads nothing first, as a direct client's create.
func (w *watcher) awaitFirstSync(ctx context.Context, gvr schema.GroupVersionResource) {
	w.add(gvr)
	w.mu.Lock()
	inf, first := w.informers[gvr], w.queue != nil && !w.waited[gvr]
	w.mu.Unlock()
	if !first {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, firstSyncWait)
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, firstSyncPoll, true, func(context.Context) (bool, error) {
		return inf.HasSynced(), nil
	}) // not synced in time: the writes read first, as before
	w.mu.Lock()
	w.waited[gvr] = true
	w.mu.Unlock()
}

// newInformer is an informer of the objects of gvr that carry the
// ownership label, in every namespace, without resync.
func (w *watcher) newInformer(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	r := w.dyn.Resource(gvr)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = LabelWorkKey
			return r.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = LabelWorkKey
			return r.Watch(ctx, o)
		},
	}
	return cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// run starts the informers (and any added later) and the repair worker,
// and stops and waits for all of them when ctx ends.
func (w *watcher) run(ctx context.Context) {
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "tether_drift"})
	w.mu.Lock()
	w.queue = q
	w.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.repairs(ctx, q)
	}()
	w.start(ctx, &wg)
	for done := false; !done; {
		select {
		case <-w.kick:
			w.start(ctx, &wg)
		case <-ctx.Done():
			done = true
		}
	}
	w.mu.Lock()
	w.queue = nil
	w.mu.Unlock()
	q.ShutDown()
	wg.Wait()
}

// start runs the informers not yet started, each until ctx ends, counted
// in wg.
func (w *watcher) start(ctx context.Context, wg *sync.WaitGroup) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for gvr, inf := range w.informers {
		if w.started[gvr] {
			continue
		}
		w.started[gvr] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			inf.RunWithContext(ctx)
		}()
	}
}

// repairs applies the held versions of drifted works until q shuts down.
func (w *watcher) repairs(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		w.mu.Lock()
		delete(w.pending, key)
		w.mu.Unlock()
		if ctx.Err() == nil && !w.a.repair(ctx, key) {
			q.Forget(key)
		}
		w.mu.Lock()
		w.lastRepair[key] = time.Now()
		w.mu.Unlock()
		q.Done(key)
	}
}

// enqueue schedules a repair of key with the work's backoff.
func (w *watcher) enqueue(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil || w.pending[key] {
		return
	}
	if time.Since(w.lastRepair[key]) > fightWindow {
		w.queue.Forget(key)
	}
	w.pending[key] = true
	w.queue.AddRateLimited(key)
}

// observe handles an added or updated object: status may have changed;
// a change Tether did not write to what Tether applied is drift.
func (w *watcher) observe(gvr schema.GroupVersionResource, oldObj, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key, applied, tracked := w.a.tracked(gvr, u)
	if key == "" {
		return
	}
	w.a.changes.add(key)
	old, _ := oldObj.(*unstructured.Unstructured)
	if tracked && u.GetResourceVersion() != applied.written.rv && drifted(old, u, applied) {
		w.a.logger.Debug("drift", "work", key, "resource", gvr.Resource, "namespace", u.GetNamespace(), "name", u.GetName())
		w.enqueue(key)
	}
}

// gone handles a deleted object (or one that lost the ownership label).
func (w *watcher) gone(gvr schema.GroupVersionResource, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key, _, tracked := w.a.tracked(gvr, u)
	if key == "" {
		return
	}
	w.a.changes.add(key)
	if tracked {
		w.a.logger.Debug("applied object gone", "work", key, "resource", gvr.Resource, "namespace", u.GetNamespace(), "name", u.GetName())
		w.enqueue(key)
	}
}

// stripCached drops what neither drift detection nor status reads from an
// object before the informer caches it: its managedFields, often the
// larger part of a small object's metadata (Karmada's member informers do
// the same, fedinformer.StripUnusedFields).
func stripCached(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.SetManagedFields(nil)
	}
	return obj, nil
}

// drifted says whether an update touched what Tether applies: the spec
// (a new generation with another spec: a Deployment's generation also
// moves with its annotations), or a label or annotation Tether applied
// (changed or removed; keys other writers add are theirs); for kinds
// without a generation, anything. old is nil when the informer sees the
// object for the first time (its first list came after Tether's write):
// then a generation other than the one Tether's write left is drift, as
// the spec it had is unknown (a repair that finds nothing changed writes
// nothing).
func drifted(old, obj *unstructured.Unstructured, applied object) bool {
	specMoved := old == nil && obj.GetGeneration() != applied.written.generation ||
		old != nil && old.GetGeneration() != obj.GetGeneration() && !reflect.DeepEqual(old.Object["spec"], obj.Object["spec"])
	return obj.GetGeneration() == 0 || specMoved ||
		!within(applied.labels, obj.GetLabels()) || !within(applied.annotations, obj.GetAnnotations())
}

// drifts says whether any of a held work's objects is not as Tether's
// last write left it in the synced informer's copy: absent, or drifted
// from what was applied. An object not applied, not mapped or of a kind
// whose informer has not synced counts as drifted (the repair finds out).
// A repair asks it under the work's lock, once a write of the work has
// recorded its mark: the informer's event for Tether's own write of a
// new version may come before that, when the previous version's mark
// still stands and the new spec looks like drift.
func (w *watcher) drifts(objects []object) bool {
	for _, o := range objects {
		if o.result != resultApplied || o.gvr.Resource == "" {
			return true
		}
		ns := ""
		if o.namespaced {
			ns = o.id.GetNamespace()
		}
		obj, ok := w.cached(o.gvr, ns, o.id.GetName())
		if !ok || obj.GetResourceVersion() != o.written.rv && drifted(nil, obj, o) {
			return true
		}
	}
	return false
}

// within says whether every key of want has its value in have.
func within(want, have map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// cachedOwn returns a copy of the informer's copy of the object named
// like desired (its namespace set) when it is there as work key's.
func (w *watcher) cachedOwn(gvr schema.GroupVersionResource, desired *unstructured.Unstructured, key string) (*unstructured.Unstructured, bool) {
	obj, ok := w.cached(gvr, desired.GetNamespace(), desired.GetName())
	if !ok || ownerOf(obj, key) != ownerUs {
		return nil, false
	}
	return obj.DeepCopy(), true
}

// cachedAbsent reports whether a synced informer covers gvr and holds no
// object named like desired (its namespace set): the member has none with
// Tether's label as far as the informer has seen. It may still have one:
// foreign, or Tether's and not seen yet.
func (w *watcher) cachedAbsent(gvr schema.GroupVersionResource, desired *unstructured.Unstructured) bool {
	store := w.synced(gvr)
	if store == nil {
		return false
	}
	_, exists, err := store.GetByKey(cache.NewObjectName(desired.GetNamespace(), desired.GetName()).String())
	return err == nil && !exists
}

// cached returns the informer's copy of an object. known is false when no
// synced informer covers gvr or it holds no such object (the caller asks
// the API server instead).
func (w *watcher) cached(gvr schema.GroupVersionResource, namespace, name string) (obj *unstructured.Unstructured, known bool) {
	store := w.synced(gvr)
	if store == nil {
		return nil, false
	}
	item, exists, err := store.GetByKey(cache.NewObjectName(namespace, name).String())
	if err != nil || !exists {
		return nil, false
	}
	u, ok := item.(*unstructured.Unstructured)
	return u, ok
}

// synced returns the store of gvr's informer once it has synced; nil when
// no informer covers gvr or it has not synced yet.
func (w *watcher) synced(gvr schema.GroupVersionResource) cache.Store {
	w.mu.Lock()
	inf := w.informers[gvr]
	w.mu.Unlock()
	if inf == nil || !inf.HasSynced() {
		return nil
	}
	return inf.GetStore()
}
