package clientapi_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/test/tier"
)

// The stalled watch's load: stallWrites writes of stallObjectBytes over
// stallKeys keys, 37.5 MiB of values that etcd sends with their previous
// values, 75 MiB in all.
const (
	stallWrites      = 1200
	stallKeys        = 16
	stallObjectBytes = 32 << 10
	// stallHeapBound is the most the hub's heap may grow meanwhile: the
	// test's buffer (1 MiB) plus gRPC's windows, far below the 75 MiB the
	// etcd client would hold for a watch nobody reads.
	stallHeapBound = 16 << 20
)

// TestWatchStalledClient: a client that opens a Watch and reads nothing
// while many large objects change costs the hub a bounded buffer, not
// every event; when it reads at last it gets every change in order. The
// etcd is a process of its own so that the heap measured is the hub's.
func TestWatchStalledClient(t *testing.T) {
	tier.Long(t, "writes until a watcher that reads nothing is cut")
	h, c := startStallHub(t)
	st := h.st
	start, err := st.Revision(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "ConfigMap", StartRevision: start})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", stallObjectBytes)
	before := heapInUse()
	last := putMany(t, st, func(i int) (string, []byte) {
		name := fmt.Sprintf("cm-%d", i%stallKeys)
		value := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"i":"%d","pad":%q}}`, name, i, pad)
		return store.ObjectKey(store.ObjectRef{Kind: "ConfigMap", Namespace: "default", Name: name}), []byte(value)
	})
	seen(t, st, store.ObjectsPrefix, start, last)
	grown := heapInUse() - before
	t.Logf("the hub's heap grew by %.1f MiB while a watcher read nothing", float64(grown)/(1<<20))
	if grown > stallHeapBound {
		t.Errorf("the hub's heap grew by %d MiB while a watcher read nothing; want at most %d MiB", grown>>20, stallHeapBound>>20)
	}
	var got int
	for prev := start; prev < last; got++ {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv after %d events: %v", got, err)
		}
		if rev := ev.GetObject().GetRevision(); rev <= prev {
			t.Fatalf("event %d at revision %d after %d; want each change once, in order", got, rev, prev)
		}
		prev = ev.GetObject().GetRevision()
	}
	if got != stallWrites {
		t.Errorf("the stalled watcher got %d events; want %d", got, stallWrites)
	}
}

// startStallHub starts the hub on an etcd process of its own, so that the
// heap the test measures is the hub's, and dials it as a viewer.
func startStallHub(t *testing.T) (*hub, *client) {
	t.Helper()
	e := etcdtest.Start(t, etcdtest.Options{})
	st, err := store.Open(ctx(t), store.Config{Endpoints: e.Endpoints}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	h := startHubOn(t, clientapi.Config{WatchBufferEvents: 64, WatchBufferBytes: 1 << 20}, st)
	// Fixed windows keep the test client's own buffers, in this process
	// too, small.
	return h, h.dial(t, viewer, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
}

// TestWatchPlacementStalledClient: a client that opens a WatchPlacement
// and reads nothing while its binding changes many times costs the hub
// nothing per change; when it reads at last the changes have coalesced
// and the last message shows the last one.
func TestWatchPlacementStalledClient(t *testing.T) {
	h, c := startStallHub(t)
	putClusters(t, h)
	h.dial(t, admin).apply(t, fixture(t, "web.yaml"), false)
	stream, err := c.placements.WatchPlacement(ctx(t), &hubv1.WatchPlacementRequest{Template: webRef})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", stallObjectBytes)
	key := store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"})
	before := heapInUse()
	last := putMany(t, h.st, func(i int) (string, []byte) {
		return key, []byte(strings.Replace(webBinding, `{"name": "web-deployment"`, fmt.Sprintf(`{"annotations": {"pad": "%d%s"}, "name": "web-deployment"`, i, pad), 1))
	})
	seen(t, h.st, key, first.GetPlacement().GetRevision(), last)
	grown := heapInUse() - before
	t.Logf("the hub's heap grew by %.1f MiB while a placement watcher read nothing", float64(grown)/(1<<20))
	if grown > stallHeapBound {
		t.Errorf("the hub's heap grew by %d MiB while a placement watcher read nothing; want at most %d MiB", grown>>20, stallHeapBound>>20)
	}
	var got int
	for rev := int64(0); rev < last; got++ {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv after %d messages: %v", got, err)
		}
		if rev = msg.GetPlacement().GetRevision(); len(msg.GetPlacement().GetClusters()) != 1 {
			t.Fatalf("placement at %d = %v; want m1", rev, msg.GetPlacement())
		}
	}
	t.Logf("%d binding changes made %d messages", stallWrites, got)
}

// putMany makes a stalled watch's load: stallWrites writes of kv(i),
// returning the last revision.
func putMany(t *testing.T, st *store.Store, kv func(i int) (key string, value []byte)) int64 {
	t.Helper()
	const writers = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		last int64
		errs = make(chan error, writers)
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < stallWrites; i += writers {
				key, value := kv(i)
				rev, err := st.Put(ctx(t), key, value)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				last = max(last, rev)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return last
}

// seen waits until a watch of its own, which reads as events come, saw
// revision last: etcd has then sent the hub every event up to it.
func seen(t *testing.T, st *store.Store, prefix string, start, last int64) {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	for ev := range st.Watch(wctx, prefix, start+1) {
		if ev.Err != nil {
			t.Fatal(ev.Err)
		}
		if ev.KV.Revision >= last {
			return
		}
	}
	t.Fatalf("watch ended before revision %d", last)
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestWatchCompactedWhileStalled: a client that reads nothing while the
// revisions it has not read are compacted ends with OUT_OF_RANGE telling
// it to List again, once it reads what was buffered.
func TestWatchCompactedWhileStalled(t *testing.T) {
	h := startHub(t, clientapi.Config{WatchBufferEvents: 2, WatchBufferBytes: 1 << 20})
	c := h.dial(t, admin)
	// From the current revision: a watch from now may open after the
	// first write.
	start, err := h.st.Revision(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "ConfigMap", StartRevision: start})
	if err != nil {
		t.Fatal(err)
	}
	// The first event proves the watch is open before the writes.
	first := c.apply(t, []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "first"}}`), false)
	if ev, err := stream.Recv(); err != nil || ev.GetObject().GetRevision() != first.GetRevision() {
		t.Fatalf("first event = %v, %v; want revision %d", ev, err, first.GetRevision())
	}
	// 1.6 MiB of changes, more than gRPC's windows hold.
	pad := strings.Repeat("x", 8<<10)
	var rev int64
	for i := range 200 {
		cm := fmt.Sprintf(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"i": "%d", "pad": %q}}`, i, pad)
		rev = c.apply(t, []byte(cm), false).GetRevision()
	}
	if err := h.st.Compact(ctx(t), rev); err != nil {
		t.Fatal(err)
	}
	after := c.apply(t, []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}}`), false)
	for {
		ev, err := stream.Recv()
		if err == nil {
			if ev.GetObject().GetRevision() == after.GetRevision() {
				t.Fatalf("Recv got every change up to the one after compacting; want the stream to end")
			}
			continue
		}
		if status.Code(err) != codes.OutOfRange || !strings.Contains(err.Error(), "List again") {
			t.Errorf("Recv after compacting what the watcher had not read = %v; want OUT_OF_RANGE saying List again", err)
		}
		return
	}
}

// TestWatchPausedWithinATransaction: a watch paused in the middle of one
// revision's events (a transaction writing many objects) resumes after
// the last one it had read: every change arrives once, in order.
func TestWatchPausedWithinATransaction(t *testing.T) {
	h := startHub(t, clientapi.Config{WatchBufferEvents: 8, WatchBufferBytes: 1 << 20})
	// From the current revision: a watch from now may open after the
	// first write.
	start, err := h.st.Revision(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := h.dial(t, viewer).objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "ConfigMap", Namespace: "default", StartRevision: start})
	if err != nil {
		t.Fatal(err)
	}
	// The first event proves the watch is open before the writes.
	first, err := h.st.Put(ctx(t), store.ObjectKey(store.ObjectRef{Kind: "ConfigMap", Namespace: "default", Name: "first"}),
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"first","namespace":"default"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := stream.Recv(); err != nil || ev.GetObject().GetRevision() != first {
		t.Fatalf("first event = %v, %v; want revision %d", ev, err, first)
	}
	// Two transactions of 100 objects of 8 KiB (800 KiB each, more than
	// gRPC's windows hold), the second's objects in another namespace
	// every other one, which the watch filters out.
	pad := strings.Repeat("x", 8<<10)
	var want []string
	for txn := range 2 {
		var ops []clientv3.Op
		for i := range 100 {
			ns, name := "default", fmt.Sprintf("t%d-%03d", txn, i)
			if txn == 1 && i%2 == 1 {
				ns = "other"
			} else {
				want = append(want, name)
			}
			value := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"pad":%q}}`, name, ns, pad)
			ops = append(ops, clientv3.OpPut(store.ObjectKey(store.ObjectRef{Kind: "ConfigMap", Namespace: ns, Name: name}), value))
		}
		if _, err := h.st.Client().Txn(ctx(t)).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for len(got) < len(want) {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv after %d events: %v", len(got), err)
		}
		got = append(got, ev.GetObject().GetRef().GetName())
	}
	if !slices.Equal(got, want) {
		t.Errorf("events = %v; want %v", got, want)
	}
}
