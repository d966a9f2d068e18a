package clientapi_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/store"
)

var webKey = store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}

// placementsEvent renders a WatchPlacements message as "TYPE name@rev
// [clusters]", or "synced@rev".
func placementsEvent(m *hubv1.WatchPlacementsResponse) string {
	if m.GetSynced() {
		return fmt.Sprintf("synced@%d", m.GetRevision())
	}
	var cs []string
	for _, c := range m.GetPlacement().GetClusters() {
		cs = append(cs, fmt.Sprintf("%s:%d", c.GetCluster(), c.GetReplicas()))
	}
	return fmt.Sprintf("%s %s@%d %v", strings.TrimPrefix(m.GetType().String(), "EVENT_TYPE_"), m.GetPlacement().GetTemplate().GetName(), m.GetRevision(), cs)
}

// recvPlacements takes n messages of stream.
func recvPlacements(t *testing.T, stream hubv1.PlacementService_WatchPlacementsClient, n int) []*hubv1.WatchPlacementsResponse {
	t.Helper()
	var out []*hubv1.WatchPlacementsResponse
	for range n {
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("WatchPlacements after %d messages: %v", len(out), err)
		}
		out = append(out, m)
	}
	return out
}

func renderAll(ms []*hubv1.WatchPlacementsResponse) []string {
	var out []string
	for _, m := range ms {
		out = append(out, placementsEvent(m))
	}
	return out
}

// TestWatchPlacements: a WatchPlacements from 0 sends the current
// placement of each selected template (only those: another namespace and
// labels that do not match are left out), equal to GetPlacement's, then
// the synced mark, then one message per change of a template or its
// binding at that change's revision. Watching again from a change's
// revision sends exactly the changes after it; from a compacted revision
// it is OUT_OF_RANGE.
func TestWatchPlacements(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	adm, c := h.dial(t, admin), h.dial(t, viewer)
	adm.apply(t, fixture(t, "web.yaml"), false)
	adm.apply(t, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: other, namespace: default, labels: {app: other}}\n"+
		"spec: {selector: {matchLabels: {app: other}}, template: {metadata: {labels: {app: other}}, spec: {containers: [{name: c, image: i}]}}}\n---\n"+
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: elsewhere, labels: {app: web}}\n"+
		"spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}\n"), false)
	put := func(key string, value string) int64 {
		t.Helper()
		rev, err := h.st.Put(ctx(t), key, []byte(value))
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	put(store.BindingKey(webKey), webBinding)
	req := &hubv1.WatchPlacementsRequest{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", LabelSelector: "app=web"}
	stream, err := c.placements.WatchPlacements(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	current := recvPlacements(t, stream, 2)
	if !current[1].GetSynced() || current[0].GetType() != hubv1.EventType_EVENT_TYPE_ADDED || current[0].GetRevision() != 0 {
		t.Fatalf("WatchPlacements from 0 began %v; want ADDED web (revision 0), then synced", renderAll(current))
	}
	if diff := cmp.Diff(getPlacement(t, c), current[0].GetPlacement(), protocmp.Transform()); diff != "" {
		t.Errorf("WatchPlacements' current placement differs from GetPlacement's (-get +watch):\n%s", diff)
	}
	moved := strings.Replace(webBinding, `"clusters": [{"name": "m1", "replicas": 3}]`, `"clusters": [{"name": "m2", "replicas": 3}]`, 1)
	r1 := put(store.BindingKey(webKey), moved)
	r2, err := h.st.Delete(ctx(t), store.BindingKey(webKey), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: webRef}); err != nil {
		t.Fatal(err)
	}
	r3, err := h.st.Revision(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{fmt.Sprintf("MODIFIED web@%d [m2:3]", r1), fmt.Sprintf("MODIFIED web@%d []", r2), fmt.Sprintf("DELETED web@%d []", r3)}
	if got := renderAll(recvPlacements(t, stream, 3)); !cmp.Equal(got, want) {
		t.Errorf("WatchPlacements changes = %v; want %v", got, want)
	}

	req.StartRevision = r1
	again, err := c.placements.WatchPlacements(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := renderAll(recvPlacements(t, again, 2)); !cmp.Equal(got, want[1:]) {
		t.Errorf("WatchPlacements from %d = %v; want %v", r1, got, want[1:])
	}

	if err := h.st.Compact(ctx(t), r3); err != nil {
		t.Fatal(err)
	}
	compacted, err := c.placements.WatchPlacements(ctx(t), req)
	if err == nil {
		_, err = compacted.Recv()
	}
	if status.Code(err) != codes.OutOfRange || !strings.Contains(err.Error(), "watch placements again from revision 0") {
		t.Errorf("WatchPlacements from compacted revision %d = %v; want OUT_OF_RANGE saying to watch again from 0", r1, err)
	}
}

// TestWatchPlacementsRefusals: a Tether kind has no placement, and a
// negative revision or a bad selector is refused.
func TestWatchPlacementsRefusals(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, viewer)
	for name, req := range map[string]*hubv1.WatchPlacementsRequest{
		"policy kind":       {Kind: "PropagationPolicy"},
		"negative revision": {Kind: "ConfigMap", StartRevision: -1},
		"bad selector":      {Kind: "ConfigMap", LabelSelector: "a=("},
	} {
		stream, err := c.placements.WatchPlacements(ctx(t), req)
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("WatchPlacements(%s) = %v; want INVALID_ARGUMENT", name, err)
		}
	}
}

// TestWatchPlacementsStalledClientIsCut: a client that takes nothing while
// its full buffer waits longer than WatchStall is cut, RESOURCE_EXHAUSTED
// saying to watch again from its last revision; doing so, it gets every
// change it had not received, once.
func TestWatchPlacementsStalledClientIsCut(t *testing.T) {
	var cuts atomic.Int64
	h := startHub(t, clientapi.Config{WatchBufferEvents: 8, WatchBufferBytes: 1 << 20, WatchStall: 200 * time.Millisecond,
		OnWatchCut: func() { cuts.Add(1) }})
	c := h.dial(t, viewer, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	start, err := h.st.Revision(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	req := &hubv1.WatchPlacementsRequest{Kind: "ConfigMap", StartRevision: start}
	stream, err := c.placements.WatchPlacements(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 1000 // placements of ~4 KiB names: more than the gRPC windows and the buffer hold
	pad := strings.Repeat("x", 200)
	for i := range writes {
		name := fmt.Sprintf("cm-%d-%s", i, pad)
		value := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"default"}}`, name)
		if _, err := h.st.Put(ctx(t), store.ObjectKey(store.ObjectRef{Kind: "ConfigMap", Namespace: "default", Name: name}), []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); cuts.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hub did not cut a placements watcher that read nothing for 30s with its buffer full")
		}
	}
	got := map[string]bool{}
	last := start
	for {
		m, err := stream.Recv()
		if err != nil {
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "watch again from the revision of the last event received") {
				t.Fatalf("stalled WatchPlacements ended with %v; want RESOURCE_EXHAUSTED saying to watch again", err)
			}
			break
		}
		got[m.GetPlacement().GetTemplate().GetName()] = true
		last = m.GetRevision()
	}
	if len(got) == writes {
		t.Fatalf("the cut watcher received all %d placements before its end; want it cut short", writes)
	}
	req.StartRevision = last
	again, err := c.placements.WatchPlacements(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	for len(got) < writes {
		m, err := again.Recv()
		if err != nil {
			t.Fatalf("watch again from revision %d after %d of %d: %v", last, len(got), writes, err)
		}
		if name := m.GetPlacement().GetTemplate().GetName(); got[name] {
			t.Fatalf("watch again from revision %d repeated %s", last, name)
		}
		got[m.GetPlacement().GetTemplate().GetName()] = true
	}
}
