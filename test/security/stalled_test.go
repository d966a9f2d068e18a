package security

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// Sizes of the stalled watches' writes.
const (
	// stallObjects ConfigMaps of stallValueBytes each are written while a
	// watch is stalled: 8 MiB of events, twice the hub's watch buffer
	// (hub/clientapi WatchBufferBytes, 4 MiB).
	stallObjects    = 1000
	stallValueBytes = 8 << 10
	// stallBatch ConfigMaps go in one Apply (about 1.6 MiB).
	stallBatch = 200
)

// stalledWatches: a viewer opens a watch on its own connection and reads
// nothing while an admin writes 8 MiB; then it reads. The hub's memory is
// bounded meanwhile (the report's RSS), and the watcher gets every change
// once it reads, or OUT_OF_RANGE if the history it missed was compacted.
func stalledWatches() []attack {
	return []attack{
		{"stalled Watch during 8 MiB of writes", stalledWatch},
		{"stalled WatchPlacement during 300 placement changes", stalledWatchPlacement},
	}
}

func stalledWatch(t *testing.T, e *hostileEnv) string {
	ns := fmt.Sprintf("stall-%d", e.attacks)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	objects := hubv1.NewObjectServiceClient(dial(t, e.h.addr, userTLS(t, e.viewerConf)))
	list, err := objects.List(ctx, &hubv1.ListRequest{ApiVersion: "v1", Kind: "ConfigMap", Namespace: ns})
	if err != nil {
		t.Fatalf("viewer List: %v", err)
	}
	last := list.GetRevision() // where a watch cut before its first event starts again
	ws, err := objects.Watch(ctx, &hubv1.WatchRequest{ApiVersion: "v1", Kind: "ConfigMap", Namespace: ns, StartRevision: last})
	if err != nil {
		t.Fatalf("viewer Watch: %v", err)
	}
	before, _, err := procMemory(e.h.p.PID())
	if err != nil {
		t.Fatal(err)
	}
	e.writeStallObjects(t, ns)
	after, _, err := procMemory(e.h.p.PID())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	cut := ""
	for len(seen) < stallObjects {
		ev, err := ws.Recv()
		switch status.Code(err) {
		case codes.OK:
			seen[ev.GetObject().GetRef().GetName()] = true
			last = ev.GetObject().GetRevision()
			continue
		case codes.OutOfRange:
			return fmt.Sprintf("contained: OUT_OF_RANGE after %d of %d (compacted); hub %d→%d MiB while stalled", len(seen), stallObjects, before/1024, after/1024)
		case codes.ResourceExhausted:
			// Stalled past the hub's WatchStall: cut; watch again from the
			// last revision received, as the status says.
			if ws, err = objects.Watch(ctx, &hubv1.WatchRequest{ApiVersion: "v1", Kind: "ConfigMap", Namespace: ns, StartRevision: last}); err != nil {
				t.Fatalf("viewer Watch again after the cut: %v", err)
			}
			cut = " (cut for stalling, then watched again from its last revision)"
			continue
		}
		t.Fatalf("the stalled watch, read after the writes, ended after %d of %d objects: %v", len(seen), stallObjects, err)
	}
	return fmt.Sprintf("contained: all %d changes read after the stall%s; hub %d→%d MiB while stalled", stallObjects, cut, before/1024, after/1024)
}

// stalledWatchPlacement: a viewer watches the placement of one template
// and reads nothing while its policy's placement changes 300 times
// (the policy's clusterNames); then it reads, within 2*rpcTimeout, until
// a placement read at or after the last change's revision. The hub
// coalesces: it sends whole placements.
func stalledWatchPlacement(t *testing.T, e *hostileEnv) string {
	name := fmt.Sprintf("stallp-%d", e.attacks)
	tmpl := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: name}
	policy := func(i int) string {
		return fmt.Sprintf("---\napiVersion: policy.tether.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: %s, namespace: default}\nspec:\n"+
			"  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: %s}]\n  placement: {clusterAffinity: {clusterNames: [nowhere-%d]}}\n", name, name, i)
	}
	if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(configMap(name, "v") + policy(0)), DefaultNamespace: "default"}); err != nil {
		t.Fatal(err)
	}
	defer e.deleteAll(t, []*hubv1.ObjectRef{
		{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: name}, tmpl})
	places := hubv1.NewPlacementServiceClient(e.admin)
	poll(t, servingWait*4, "the template bound", func() (bool, string) {
		resp, err := places.GetPlacement(rpcCtx(t), &hubv1.GetPlacementRequest{Template: tmpl})
		return err == nil && resp.GetPlacement().GetBinding() != nil, fmt.Sprint(resp, err)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*rpcTimeout)
	defer cancel()
	watcher := hubv1.NewPlacementServiceClient(dial(t, e.h.addr, userTLS(t, e.viewerConf)))
	ws, err := watcher.WatchPlacement(ctx, &hubv1.WatchPlacementRequest{Template: tmpl})
	if err != nil {
		t.Fatalf("viewer WatchPlacement: %v", err)
	}
	before, _, err := procMemory(e.h.p.PID())
	if err != nil {
		t.Fatal(err)
	}
	const changes = 300
	var lastRev int64
	for i := 1; i <= changes; i++ {
		resp, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(policy(i))})
		if err != nil {
			t.Fatalf("policy change %d: %v", i, err)
		}
		lastRev = resp.GetRevision()
	}
	after, _, err := procMemory(e.h.p.PID())
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for {
		resp, err := ws.Recv()
		if err != nil {
			t.Fatalf("the stalled WatchPlacement, read after %d changes, ended after %d messages: %v", changes, got, err)
		}
		got++
		if resp.GetPlacement().GetRevision() >= lastRev {
			break // read after the last change: the current placement
		}
	}
	return fmt.Sprintf("contained: %d messages for %d changes, the last one current; hub %d→%d MiB while stalled", got, changes, before/1024, after/1024)
}

// writeStallObjects applies stallObjects ConfigMaps of stallValueBytes in
// namespace ns, stallBatch at a time.
func (e *hostileEnv) writeStallObjects(t *testing.T, ns string) {
	value := strings.Repeat("s", stallValueBytes)
	for b := 0; b < stallObjects; b += stallBatch {
		var m strings.Builder
		for i := b; i < b+stallBatch; i++ {
			fmt.Fprintf(&m, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s%d, namespace: %s}\ndata: {v: %s}\n", i, ns, value)
		}
		if _, err := e.objects().Apply(rpcCtx(t), &hubv1.ApplyRequest{Manifests: []byte(m.String())}); err != nil {
			t.Fatalf("apply ConfigMaps %d-%d: %v", b, b+stallBatch-1, err)
		}
	}
}
