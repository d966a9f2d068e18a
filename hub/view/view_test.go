package view_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/hub/view"
)

const waitTimeout = 20 * time.Second

func bindingKey(name string) string {
	return store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: name})
}

func bindingJSON(t testing.TB, name string, clusters ...string) []byte {
	t.Helper()
	b := fmt.Sprintf(`{"apiVersion":"work.tether.io/v1alpha1","kind":"ResourceBinding","metadata":{"name":%q,"namespace":"default"},"spec":{"clusters":[`, name)
	for i, c := range clusters {
		if i > 0 {
			b += ","
		}
		b += fmt.Sprintf(`{"name":%q,"replicas":1}`, c)
	}
	return []byte(b + `]},"status":{"aggregatedStatus":[{"clusterName":"a","applied":true}]}}`)
}

func put(t testing.TB, st *store.Store, key string, value []byte) int64 {
	t.Helper()
	rev, err := st.Put(context.Background(), key, value)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return rev
}

// run starts a view of src until the test ends and waits for its first
// list.
func run(t *testing.T, src view.Source) *view.View {
	t.Helper()
	v, err := view.New(src, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v; want nil after cancel", err)
		}
	})
	select {
	case <-v.Synced():
	case <-time.After(waitTimeout):
		t.Fatal("view not synced")
	}
	return v
}

// take waits for sub to be ready, then takes its batch.
func take(t *testing.T, sub *view.Subscription) view.Batch {
	t.Helper()
	select {
	case <-sub.Ready():
	case <-time.After(waitTimeout):
		t.Fatal("subscription never ready")
	}
	return sub.Take()
}

// takeUntil takes batches until one is at rev or later, and returns the
// changes of all of them by key.
func takeUntil(t *testing.T, sub *view.Subscription, rev int64) map[string]*view.Object {
	t.Helper()
	got := map[string]*view.Object{}
	for {
		b := take(t, sub)
		for _, c := range b.Changes {
			got[c.Key] = c.Object
		}
		if b.Revision >= rev {
			return got
		}
	}
}

// TestFirstBatchIsFullThenChanges: the first batch holds every object of
// the subscribed prefixes, decoded, at the store's revision; then come
// the changes, deletes as nil objects; a write outside the held prefixes
// advances the revision.
func TestFirstBatchIsFullThenChanges(t *testing.T) {
	st := etcdtest.Embedded(t)
	put(t, st, bindingKey("web"), bindingJSON(t, "web", "a", "b"))
	rev := put(t, st, store.ClusterKey("a"), []byte(`{"metadata":{"name":"a"}}`))
	v := run(t, st)
	sub := v.Subscribe(store.BindingsPrefix)
	defer sub.Close()
	b := take(t, sub)
	if !b.Full || b.Revision != rev || len(b.Changes) != 1 || b.Changes[0].Key != bindingKey("web") {
		t.Fatalf("first batch = full %v, revision %d, %d changes; want full, %d, the binding", b.Full, b.Revision, len(b.Changes), rev)
	}
	rb := b.Changes[0].Object.Value.(*workv1alpha1.ResourceBinding)
	if len(rb.Spec.Clusters) != 2 || len(rb.Status.AggregatedStatus) != 0 {
		t.Errorf("binding = %d clusters, %d status items; want 2, 0 (items left to hub/aggregate)", len(rb.Spec.Clusters), len(rb.Status.AggregatedStatus))
	}
	put(t, st, bindingKey("api"), bindingJSON(t, "api", "b"))
	if _, err := st.Delete(context.Background(), bindingKey("web"), 0); err != nil {
		t.Fatal(err)
	}
	last := put(t, st, store.ReportKey("a", "x"), []byte("{}"))
	got := takeUntil(t, sub, last)
	if o, ok := got[bindingKey("web")]; !ok || o != nil {
		t.Errorf("web: %v, %v; want a delete (nil object)", o, ok)
	}
	if o := got[bindingKey("api")]; o == nil || o.Err != nil {
		t.Errorf("api = %+v; want decoded", o)
	}
	if len(got) != 2 {
		t.Errorf("changes = %d keys; want 2 (the report is outside the held prefixes)", len(got))
	}
	on, err := v.ByIndex(store.BindingsPrefix, view.ByCluster, "b")
	if err != nil || len(on) != 1 || on[0].Key != bindingKey("api") {
		t.Errorf("ByIndex(cluster b) = %v, %v; want api's binding", on, err)
	}
}

// TestSlowSubscriberCoalesced: a subscriber that takes nothing while one
// key is written 200 times holds one change for it, the latest, and does
// not hold up another subscriber or the view.
func TestSlowSubscriberCoalesced(t *testing.T) {
	st := etcdtest.Embedded(t)
	v := run(t, st)
	slow, fast := v.Subscribe(store.BindingsPrefix), v.Subscribe(store.BindingsPrefix)
	defer slow.Close()
	defer fast.Close()
	take(t, slow)
	var last int64
	for i := range 200 {
		last = put(t, st, bindingKey("web"), bindingJSON(t, "web", fmt.Sprintf("c%d", i)))
	}
	takeUntil(t, fast, last)
	if got := v.Revision(); got < last {
		t.Fatalf("view revision = %d; want %d with a subscriber that takes nothing", got, last)
	}
	b := slow.Take()
	if len(b.Changes) != 1 || b.Changes[0].Object.Revision != last {
		t.Fatalf("slow batch = %d changes; want 1 at revision %d", len(b.Changes), last)
	}
}

// TestUndecodableKeepsLastGood: bytes that do not decode leave the last
// good value with the error; after a restart (a new view) there is none.
func TestUndecodableKeepsLastGood(t *testing.T) {
	st := etcdtest.Embedded(t)
	v := run(t, st)
	sub := v.Subscribe(store.BindingsPrefix)
	defer sub.Close()
	take(t, sub)
	put(t, st, bindingKey("web"), bindingJSON(t, "web", "a"))
	last := put(t, st, bindingKey("web"), []byte("{not json"))
	o := takeUntil(t, sub, last)[bindingKey("web")]
	if o == nil || o.Err == nil || o.Value == nil || len(o.Value.(*workv1alpha1.ResourceBinding).Spec.Clusters) != 1 {
		t.Fatalf("undecodable binding = %+v; want the error with the last good value", o)
	}
	fresh := run(t, st)
	if o, ok := fresh.Get(bindingKey("web")); !ok || o.Err == nil || o.Value != nil {
		t.Fatalf("after a restart = %+v, %v; want the error and no value", o, ok)
	}
}

// compacting is the store whose first watch starts at a compacted
// revision: etcd itself answers ErrCompacted.
type compacting struct {
	*store.Store
	from  int64
	fresh bool
}

func (c *compacting) Watch(ctx context.Context, prefix string, rev int64, opts ...store.WatchOption) <-chan store.Event {
	if !c.fresh {
		c.fresh, rev = true, c.from
	}
	return c.Store.Watch(ctx, prefix, rev, opts...)
}

// TestCompactedWatchRelists: a watch from a compacted revision lists
// again, and every subscriber gets a full batch.
func TestCompactedWatchRelists(t *testing.T) {
	st := etcdtest.Embedded(t)
	first := put(t, st, bindingKey("web"), bindingJSON(t, "web", "a"))
	last := put(t, st, bindingKey("web"), bindingJSON(t, "web", "b"))
	if err := st.Compact(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	v := run(t, &compacting{Store: st, from: first})
	deadline := time.Now().Add(waitTimeout)
	for v.Relists() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("Relists = %d; want 2 after a compacted watch", v.Relists())
		}
		time.Sleep(5 * time.Millisecond)
	}
	sub := v.Subscribe(store.BindingsPrefix)
	defer sub.Close()
	if b := take(t, sub); !b.Full || len(b.Changes) != 1 {
		t.Fatalf("batch after relist = full %v, %d changes; want full, 1", b.Full, len(b.Changes))
	}
}

// TestDecodedOnceForEverySubscriber: however many subscribers, each
// stored value is decoded once.
func TestDecodedOnceForEverySubscriber(t *testing.T) {
	st := etcdtest.Embedded(t)
	for i := range 50 {
		put(t, st, bindingKey(fmt.Sprint(i)), bindingJSON(t, fmt.Sprint(i), "a"))
	}
	v := run(t, st)
	for range 4 {
		sub := v.Subscribe(store.BindingsPrefix)
		defer sub.Close()
		if b := take(t, sub); len(b.Changes) != 50 {
			t.Fatalf("first batch = %d changes; want 50", len(b.Changes))
		}
	}
	if got := v.Decodes(); got != 50 {
		t.Fatalf("Decodes = %d for 50 bindings and 4 subscribers; want 50", got)
	}
}

// TestSubscribeUnderAHeldPrefix: a subscription to a prefix under a held
// one gets, in its full batch and its changes, only the objects under it;
// Snapshot of such a prefix likewise.
func TestSubscribeUnderAHeldPrefix(t *testing.T) {
	st := etcdtest.Embedded(t)
	cfg := store.ObjectsPrefix + "config.tether.io/"
	ric := cfg + "ResourceInterpreterCustomization/_/first"
	put(t, st, ric, []byte(`{"apiVersion":"config.tether.io/v1alpha1","kind":"ResourceInterpreterCustomization","metadata":{"name":"first"}}`))
	put(t, st, store.ObjectsPrefix+"apps/Deployment/default/web", []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`))
	v := run(t, st)
	sub := v.Subscribe(cfg)
	defer sub.Close()
	b := take(t, sub)
	if !b.Full || len(b.Changes) != 1 || b.Changes[0].Key != ric {
		t.Fatalf("first batch = full %v, %d changes; want full, only %s", b.Full, len(b.Changes), ric)
	}
	put(t, st, store.ObjectsPrefix+"apps/Deployment/default/api", []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api"}}`))
	second := cfg + "ResourceInterpreterCustomization/_/second"
	last := put(t, st, second, []byte(`{"apiVersion":"config.tether.io/v1alpha1","kind":"ResourceInterpreterCustomization","metadata":{"name":"second"}}`))
	got := takeUntil(t, sub, last)
	if _, ok := got[second]; !ok || len(got) != 1 {
		t.Errorf("changes = %v; want only %s", got, second)
	}
	if snap := v.Snapshot(cfg); len(snap.Objects) != 2 {
		t.Errorf("Snapshot(%s) = %d objects; want the two customizations", cfg, len(snap.Objects))
	}
}
