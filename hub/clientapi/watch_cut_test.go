package clientapi_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/store"
)

// TestWatchStalledClientIsCut: a client that takes nothing while its full
// buffer waits longer than WatchStall is cut: the hub drops what it held
// for it and, once the client reads again, its stream ends
// RESOURCE_EXHAUSTED saying to watch again from its last revision; doing
// so, it misses nothing. Before, a stalled watcher was never ended.
func TestWatchStalledClientIsCut(t *testing.T) {
	var cuts atomic.Int64
	h := startHub(t, clientapi.Config{WatchBufferEvents: 8, WatchBufferBytes: 1 << 20, WatchStall: 200 * time.Millisecond,
		OnWatchCut: func() { cuts.Add(1) }})
	c := h.dial(t, viewer, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	start, err := h.st.Revision(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "ConfigMap", StartRevision: start})
	if err != nil {
		t.Fatal(err)
	}
	const writes = 400 // of 4 KiB: more than the gRPC windows and the buffer hold
	pad := strings.Repeat("x", 4<<10)
	for i := range writes {
		name := fmt.Sprintf("cm-%d", i)
		value := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"},"data":{"pad":%q}}`, name, pad)
		if _, err := h.st.Put(ctx(t), store.ObjectKey(store.ObjectRef{Kind: "ConfigMap", Namespace: "default", Name: name}), []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); cuts.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hub did not cut a watcher that read nothing for 30s with its buffer full")
		}
	}

	got := map[string]bool{}
	var last int64
	for {
		resp, err := stream.Recv()
		if err != nil {
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "watch again from the revision of the last event received") {
				t.Fatalf("stalled watch ended with %v; want RESOURCE_EXHAUSTED saying to watch again", err)
			}
			break
		}
		got[resp.GetObject().GetRef().GetName()] = true
		last = resp.GetObject().GetRevision()
	}
	if len(got) == writes {
		t.Fatalf("the cut watcher received all %d events before its end; want it cut short", writes)
	}
	again, err := c.objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "ConfigMap", StartRevision: max(last, start)})
	if err != nil {
		t.Fatal(err)
	}
	for len(got) < writes {
		resp, err := again.Recv()
		if err != nil {
			t.Fatalf("watch again from revision %d after %d of %d: %v", last, len(got), writes, err)
		}
		got[resp.GetObject().GetRef().GetName()] = true
	}
}
