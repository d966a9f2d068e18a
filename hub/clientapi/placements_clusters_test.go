package clientapi

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// sharedBinding places web on m1 by name, with no recorded rejections:
// WatchPlacements recomputes them from the stored clusters.
const sharedBinding = `{"apiVersion": "work.tether.io/v1alpha1", "kind": "ResourceBinding",
  "metadata": {"name": "web-deployment", "namespace": "default", "labels": {"step": "%d"}},
  "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"},
    "placement": {"clusterAffinity": {"clusterNames": ["m1"]}}, "clusters": [{"name": "m1"}]}}`

// placementsStream is one b.watchPlacements running until the test ends.
func placementsStream(t *testing.T, b *backend) <-chan *hubv1.WatchPlacementsResponse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan *hubv1.WatchPlacementsResponse, 16)
	done := make(chan error, 1)
	go func() {
		done <- b.watchPlacements(ctx, &hubv1.WatchPlacementsRequest{ApiVersion: "apps/v1", Kind: "Deployment"}, readsAll,
			func(m *hubv1.WatchPlacementsResponse) error { out <- m; return nil })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Errorf("watchPlacements: %v", err)
		}
	})
	return out
}

// nextPlacement is the next message of s that is not the synced mark,
// rendered as its rejected clusters.
func nextPlacement(t *testing.T, s <-chan *hubv1.WatchPlacementsResponse) []string {
	t.Helper()
	for {
		select {
		case m := <-s:
			if m.GetSynced() {
				continue
			}
			var rejected []string
			for _, r := range m.GetPlacement().GetRejections() {
				rejected = append(rejected, r.GetCluster())
			}
			return rejected
		case <-time.After(30 * time.Second):
			t.Fatal("no placement from WatchPlacements within 30s")
			return nil
		}
	}
}

// TestWatchPlacementsShareClusters: WatchPlacements streams recompute
// rejections from one list of clusters: a stream opened while nothing
// changed reads only the templates and bindings, not the clusters again;
// once a cluster record changes, every stream's next placement is
// computed with it, from one read of the list for all of them.
func TestWatchPlacementsShareClusters(t *testing.T) {
	b, st := localBackend(t)
	ctx := context.Background()
	put := func(key, value string) {
		t.Helper()
		if _, err := st.Put(ctx, key, []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	cluster := func(name string) string {
		return fmt.Sprintf(`{"apiVersion": "cluster.tether.io/v1alpha1", "kind": "Cluster", "metadata": {"name": %q}}`, name)
	}
	web := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}
	put(store.ClusterKey("m1"), cluster("m1"))
	put(store.ClusterKey("m2"), cluster("m2"))
	put(store.ObjectKey(web), `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}}`)
	put(store.BindingKey(web), fmt.Sprintf(sharedBinding, 0))

	first := placementsStream(t, b)
	if got := nextPlacement(t, first); !slices.Equal(got, []string{"m2"}) {
		t.Fatalf("first stream: rejected %v; want [m2]", got)
	}
	before := st.Requests().QuorumReads
	second := placementsStream(t, b)
	if got := nextPlacement(t, second); !slices.Equal(got, []string{"m2"}) {
		t.Fatalf("second stream: rejected %v; want [m2]", got)
	}
	if reads := st.Requests().QuorumReads - before; reads != 2 {
		t.Errorf("second stream's current placements: %d quorum reads; want 2 (the templates and their bindings; the clusters as the first stream read them)", reads)
	}

	put(store.ClusterKey("m3"), cluster("m3"))
	before = st.Requests().QuorumReads
	put(store.BindingKey(web), fmt.Sprintf(sharedBinding, 1))
	for name, s := range map[string]<-chan *hubv1.WatchPlacementsResponse{"first": first, "second": second} {
		if got := nextPlacement(t, s); !slices.Equal(got, []string{"m2", "m3"}) {
			t.Errorf("%s stream after m3 registered: rejected %v; want [m2 m3]", name, got)
		}
	}
	if reads := st.Requests().QuorumReads - before; reads != 3 {
		t.Errorf("the binding's change on two streams: %d quorum reads; want 3 (its template at its revision on each, the clusters once)", reads)
	}
}
