package apply_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// TestSnapshotFromCacheWithoutManagedFields: the drift informers cache
// applied objects without their managedFields (memory: a server-side
// applied object's managedFields are often the larger part of its
// metadata), and a Snapshot, read from that cache, still has the rest.
func TestSnapshotFromCacheWithoutManagedFields(t *testing.T) {
	namespace(t, "cache")
	a := startApplier(t)
	w := work(t, "cache/cm", "v1", nil, configMap("cache", "cm", map[string]string{"k": "v"}))
	mustApply(t, a, w, agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	eventually(t, "a snapshot without managedFields", func(ctx context.Context) error {
		s, ok := a.Snapshot(ctx, w.Key)
		if !ok {
			return errors.New("work not held")
		}
		o := s.Objects[0].Observed
		switch {
		case o == nil:
			return errors.New("object not observed: " + s.Objects[0].Message)
		case len(o.GetManagedFields()) > 0:
			return errors.New("observed object has managedFields")
		case o.Object["data"] == nil || o.GetAnnotations()[apply.AnnotationWorkKey] != w.Key:
			return errors.New("observed object lost more than its managedFields")
		}
		return nil
	})
}

// countGets returns a running Applier whose GETs of path are counted.
func countGets(t *testing.T, path string) (*apply.Applier, *atomic.Int64) {
	t.Helper()
	rc := env.Clusters[0].RESTConfig()
	gets := &atomic.Int64{}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && r.URL.Path == path {
				gets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	return runApplier(t, apply.Config{RESTConfig: rc, Interpreter: testInterpreter(t)}, testLogger(t)), gets
}

// applyAndCache applies w and waits until the drift informer holds its
// first object (a Snapshot of it without managedFields, which a GET's
// copy has).
func applyAndCache(t *testing.T, a *apply.Applier, w state.Work) {
	t.Helper()
	mustApply(t, a, w, agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	eventually(t, "the object in the drift informer", func(ctx context.Context) error {
		s, ok := a.Snapshot(ctx, w.Key)
		if !ok || s.Objects[0].Observed == nil || len(s.Objects[0].Observed.GetManagedFields()) > 0 {
			return errors.New("not read from the cache yet")
		}
		return nil
	})
}

// TestNewVersionAppliedWithoutRead: once the drift informer holds an
// object of the work, applying a new version of the work writes it
// without reading it from the API server first (the write carries the
// cached resourceVersion instead, so it still lands only on the object
// seen); the new content is there.
func TestNewVersionAppliedWithoutRead(t *testing.T) {
	namespace(t, "cacheread")
	a, gets := countGets(t, "/api/v1/namespaces/cacheread/configmaps/cm")
	applyAndCache(t, a, work(t, "cacheread/cm", "v1", nil, configMap("cacheread", "cm", map[string]string{"k": "1"})))
	before := gets.Load()
	w2 := work(t, "cacheread/cm", "v2", nil, configMap("cacheread", "cm", map[string]string{"k": "2"}))
	mustApply(t, a, w2, agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	if n := gets.Load() - before; n != 0 {
		t.Errorf("applying v2 read the object %d times from the API server; want 0 (it is in the cache)", n)
	}
	cm, err := kube().CoreV1().ConfigMaps("cacheread").Get(context.Background(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "2" || cm.Annotations[apply.AnnotationWorkVersion] != "v2" {
		t.Errorf("object after v2: data %v, work version %q; want k=2, v2", cm.Data, cm.Annotations[apply.AnnotationWorkVersion])
	}
}

// TestDeletedWithoutRead: a work whose object the drift informer holds is
// deleted without reading the object from the API server first.
func TestDeletedWithoutRead(t *testing.T) {
	namespace(t, "cachedel")
	a, gets := countGets(t, "/api/v1/namespaces/cachedel/configmaps/cm")
	w := work(t, "cachedel/cm", "v1", nil, configMap("cachedel", "cm", map[string]string{"k": "1"}))
	applyAndCache(t, a, w)
	before := gets.Load()
	err := a.Delete(context.Background(), w, state.Removal{Policy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE,
		Reason: agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED, Hub: "hub-a"})
	if err != nil {
		t.Fatal(err)
	}
	if n := gets.Load() - before; n != 0 {
		t.Errorf("deleting read the object %d times from the API server; want 0 (it is in the cache)", n)
	}
	_, err = kube().CoreV1().ConfigMaps("cachedel").Get(context.Background(), "cm", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("object after Delete: error %v; want not found", err)
	}
}

// networkPolicy is a NetworkPolicy selecting pods labelled app=app: a
// kind with a generation that no controller of the kit's members writes.
func networkPolicy(ns, name, app string) obj {
	return obj{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": obj{"name": name, "namespace": ns},
		"spec": obj{"podSelector": obj{"matchLabels": obj{"app": app}}}}
}

var networkPolicies = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}

// staleCache applies w (NetworkPolicy np), waits for it in the cache,
// changes the object behind the informer's back (another writer's
// annotation: not drift, the spec and generation stay) and, once the
// informer has seen that, puts the old copy back in the cache.
func staleCache(t *testing.T, a *apply.Applier, w state.Work, ns string) {
	t.Helper()
	applyAndCache(t, a, w)
	ctx := context.Background()
	nps := kube().NetworkingV1().NetworkPolicies(ns)
	old, err := nps.Get(ctx, "np", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := old.DeepCopy()
	changed.Annotations["other-writer"] = w.Version
	if _, err := nps.Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(old)
	if err != nil {
		t.Fatal(err)
	}
	stale := &unstructured.Unstructured{Object: u}
	stale.SetAPIVersion("networking.k8s.io/v1")
	stale.SetKind("NetworkPolicy")
	eventually(t, "the other writer's change in the cache", func(ctx context.Context) error {
		s, _ := a.Snapshot(ctx, w.Key)
		if s.Objects[0].Observed.GetAnnotations()["other-writer"] != w.Version {
			return errors.New("not yet")
		}
		return nil
	})
	if err := apply.SetCached(a, networkPolicies, stale); err != nil {
		t.Fatal(err)
	}
}

// TestStaleCacheApplyReadsAgain: a new version applied on a cached copy
// that is behind the object conflicts on the copy's resourceVersion, reads
// the object from the API server and is applied.
func TestStaleCacheApplyReadsAgain(t *testing.T) {
	const ns = "stalecacheapply"
	namespace(t, ns)
	a, gets := countGets(t, "/apis/networking.k8s.io/v1/namespaces/"+ns+"/networkpolicies/np")
	staleCache(t, a, work(t, ns+"/np", "v1", nil, networkPolicy(ns, "np", "one")), ns)
	before := gets.Load()
	mustApply(t, a, work(t, ns+"/np", "v2", nil, networkPolicy(ns, "np", "two")), agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	if n := gets.Load() - before; n != 1 {
		t.Errorf("applying on a stale copy read the object %d times; want 1 (after the conflict)", n)
	}
	np, err := kube().NetworkingV1().NetworkPolicies(ns).Get(context.Background(), "np", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if np.Spec.PodSelector.MatchLabels["app"] != "two" || np.Annotations["other-writer"] != "v1" {
		t.Errorf("object after v2 on a stale copy: selector %v, annotations %v; want app=two and the other writer's annotation",
			np.Spec.PodSelector.MatchLabels, np.Annotations)
	}
}

// TestStaleCacheDeleteReadsAgain: a deletion of a cached copy that is
// behind the object conflicts on the copy's resourceVersion (it would
// otherwise take the object for one that is not the work's any more and
// leave it), reads the object from the API server and deletes it.
func TestStaleCacheDeleteReadsAgain(t *testing.T) {
	const ns = "stalecachedelete"
	namespace(t, ns)
	a, gets := countGets(t, "/apis/networking.k8s.io/v1/namespaces/"+ns+"/networkpolicies/np")
	w := work(t, ns+"/np", "v1", nil, networkPolicy(ns, "np", "one"))
	staleCache(t, a, w, ns)
	before := gets.Load()
	ctx := context.Background()
	err := a.Delete(ctx, w, state.Removal{Policy: agentv1.DeletionPolicy_DELETION_POLICY_DELETE,
		Reason: agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED, Hub: "hub-a"})
	if err != nil {
		t.Fatal(err)
	}
	if n := gets.Load() - before; n != 1 {
		t.Errorf("deleting on a stale copy read the object %d times; want 1 (after the conflict)", n)
	}
	if _, err := kube().NetworkingV1().NetworkPolicies(ns).Get(ctx, "np", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("object after Delete on a stale copy: error %v; want not found", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestOwnWriteIsNotDrift: applying new versions of works whose objects
// the drift informer holds writes each object once. The informer's event
// for Tether's own write may come before the write has recorded its
// mark, and looks like drift then (the spec moved); the repair it queues
// finds the object as written and writes nothing. A real drift after
// them is still repaired, by one more write. (NetworkPolicies: no
// controller of the kit's members writes them, so no other write races.)
func TestOwnWriteIsNotDrift(t *testing.T) {
	const ns, works = "ownwrite", 20
	namespace(t, ns)
	rc := env.Clusters[0].RESTConfig()
	applies := &atomic.Int64{}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/apis/networking.k8s.io/v1/namespaces/"+ns+"/") {
				applies.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	a := runApplier(t, apply.Config{RESTConfig: rc, Interpreter: testInterpreter(t)}, testLogger(t))
	name := func(i int) string { return fmt.Sprintf("np%02d", i) }
	for i := range works {
		applyAndCache(t, a, work(t, ns+"/"+name(i), "v1", nil, networkPolicy(ns, name(i), "a")))
	}
	before := applies.Load()
	for i := range works {
		mustApply(t, a, work(t, ns+"/"+name(i), "v2", nil, networkPolicy(ns, name(i), "b")), agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	}
	// A real drift, repaired after whatever the v2 writes queued.
	patch := []byte(`{"spec":{"podSelector":{"matchLabels":{"app":"drifted"}}}}`)
	if _, err := kube().NetworkingV1().NetworkPolicies(ns).Patch(context.Background(), name(0), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the drift repaired", func(ctx context.Context) error {
		np, err := kube().NetworkingV1().NetworkPolicies(ns).Get(ctx, name(0), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if app := np.Spec.PodSelector.MatchLabels["app"]; app != "b" {
			return fmt.Errorf("podSelector app=%s", app)
		}
		return nil
	})
	if n := applies.Load() - before; n != works+1 {
		t.Errorf("%d new versions and one drift cost %d applies; want %d", works, n, works+1)
	}
}

// TestNewObjectsCreatedWithoutRead: the first objects of a kind a running
// applier writes are not read from the API server first: the write waits
// for the kind's new drift informer to list, which knows them new, as a
// direct client's create does.
func TestNewObjectsCreatedWithoutRead(t *testing.T) {
	const ns, works = "newobjs", 5
	namespace(t, ns)
	rc := env.Clusters[0].RESTConfig()
	gets := &atomic.Int64{}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/"+ns+"/configmaps/") {
				gets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	a := runApplier(t, apply.Config{RESTConfig: rc, Interpreter: testInterpreter(t)}, testLogger(t))
	for i := range works {
		name := fmt.Sprintf("cm%d", i)
		mustApply(t, a, work(t, ns+"/"+name, "v1", nil, configMap(ns, name, map[string]string{"k": "v"})), agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("creating %d new ConfigMaps read them %d times from the API server; want 0", works, n)
	}
}
