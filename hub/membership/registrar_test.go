package membership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/store"
)

func heartbeat(kinds ...string) *agentv1.Heartbeat {
	hb := &agentv1.Heartbeat{KubernetesVersion: "v1.34.4"}
	for _, k := range kinds {
		hb.ApiEnablements = append(hb.ApiEnablements, &agentv1.APIEnablement{
			GroupVersion: "example.com/v1", Resources: []*agentv1.APIResource{{Name: k + "s", Kind: k}}})
	}
	return hb
}

// TestAPIEnablementsFollowHeartbeats: the record is created with the APIs
// of the first heartbeat; a heartbeat with another set rewrites
// status.apiEnablements and keeps what an admin set; one without any
// (failed discovery) and one with the same set write nothing.
func TestAPIEnablementsFollowHeartbeats(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	defer st.Close()
	leases := liveness.New(liveness.Config{})
	r := NewRegistrar(st, leases, hclog.NewNullLogger())
	key := store.ClusterKey("edge-1")
	read := func() (clusterv1alpha1.Cluster, int64) {
		t.Helper()
		kv, err := st.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		var c clusterv1alpha1.Cluster
		if err := json.Unmarshal(kv.Value, &c); err != nil {
			t.Fatal(err)
		}
		return c, kv.Revision
	}
	kinds := func(c clusterv1alpha1.Cluster) []string {
		var out []string
		for _, e := range c.Status.APIEnablements {
			for _, res := range e.Resources {
				out = append(out, res.Kind)
			}
		}
		return out
	}

	leases.Heartbeat("edge-1", heartbeat("Widget"))
	if err := r.sync(ctx); err != nil {
		t.Fatal(err)
	}
	c, _ := read()
	if diff := cmp.Diff([]string{"Widget"}, kinds(c)); diff != "" {
		t.Fatalf("created record's APIs (-want +got):\n%s", diff)
	}

	// An admin labels the cluster; then a CRD is installed in the member.
	c.Labels = map[string]string{"tier": "edge"}
	data, _ := json.Marshal(c)
	if _, err := st.Put(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	leases.Heartbeat("edge-1", heartbeat("Widget", "Gadget"))
	if err := r.sync(ctx); err != nil {
		t.Fatal(err)
	}
	c, rev := read()
	if diff := cmp.Diff([]string{"Widget", "Gadget"}, kinds(c)); diff != "" || c.Labels["tier"] != "edge" {
		t.Fatalf("after a new CRD: APIs (-want +got):\n%s\nlabels %v; want tier=edge kept", diff, c.Labels)
	}

	for name, hb := range map[string]*agentv1.Heartbeat{"no enablements": heartbeat(), "same enablements": heartbeat("Widget", "Gadget")} {
		leases.Heartbeat("edge-1", hb)
		if err := r.sync(ctx); err != nil {
			t.Fatal(err)
		}
		if c, now := read(); now != rev || len(kinds(c)) != 2 {
			t.Errorf("%s: record revision %d → %d, APIs %v; want no write", name, rev, now, kinds(c))
		}
	}

	// A new registrar (a hub restart) finds the record up to date.
	r2 := NewRegistrar(st, leases, hclog.NewNullLogger())
	if err := r2.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, now := read(); now != rev {
		t.Errorf("a restarted registrar rewrote an up-to-date record (revision %d → %d)", rev, now)
	}
}

// TestRecordTakesTopology: the first record carries the topology and the
// labels the agent proposed (tether-agent --provider/--region/--zones/--labels).
func TestRecordTakesTopology(t *testing.T) {
	hb := heartbeat()
	hb.Topology = &agentv1.Topology{Provider: "kwok", Region: "eu", Zones: []string{"eu-1a"}, Labels: map[string]string{"tier": "edge"}}
	c := Record(lease.Lease{Cluster: "edge-1", Heartbeat: hb, LastHeartbeat: time.Now()}, false)
	want := clusterv1alpha1.ClusterSpec{Provider: "kwok", Region: "eu", Zones: []string{"eu-1a"}}
	if diff := cmp.Diff(want, c.Spec); diff != "" {
		t.Errorf("Record spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"tier": "edge"}, c.Labels); diff != "" {
		t.Errorf("Record labels (-want +got):\n%s", diff)
	}
	hb.Topology.Labels["tier"] = "changed"
	if c.Labels["tier"] != "edge" {
		t.Errorf("Record shares the heartbeat's label map; want a copy")
	}
}

// TestNewLeaderDoesNotRevive: a registrar that starts (a new leader's)
// does not re-create the record of a cluster an admin removed, whose lease
// the replica still holds; a heartbeat after its start registers as usual.
func TestNewLeaderDoesNotRevive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	defer st.Close()
	leases := liveness.New(liveness.Config{})
	leases.Heartbeat("removed", heartbeat()) // its record was removed; its lease stays
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- NewRegistrar(st, leases, hclog.NewNullLogger()).Run(rctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	// A cluster heartbeating after the start is registered; once it is,
	// the registrar has looked at the removed one too.
	deadline := time.Now().Add(30 * time.Second)
	for {
		leases.Heartbeat("live", heartbeat())
		if _, err := st.Get(ctx, store.ClusterKey("live")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a cluster heartbeating after the registrar started was not registered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := st.Get(ctx, store.ClusterKey("removed")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("record of the removed cluster = %v; want ErrNotFound (not re-created from a leftover lease)", err)
	}
}

// TestManyNewClustersRegisterTogether: clusters that heartbeat for the
// first time at once get their records created concurrently (etcd commits
// them together), and a record just created is not read back.
func TestManyNewClustersRegisterTogether(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	defer st.Close()
	leases := liveness.New(liveness.Config{})
	r := NewRegistrar(st, leases, hclog.NewNullLogger())
	counted := &countingRecords{records: st, together: make(chan struct{})}
	r.store = counted
	const clusters = 64
	for i := range clusters {
		leases.Heartbeat(fmt.Sprintf("edge-%02d", i), heartbeat("Widget"))
	}
	if err := r.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx, store.ClustersPrefix); err != nil || n != clusters {
		t.Fatalf("%d cluster records, %v; want %d", n, err, clusters)
	}
	if !counted.wereTogether.Load() {
		t.Errorf("records were created one at a time; want several at once")
	}
	if n := counted.gets.Load(); n != 0 {
		t.Errorf("%d records read back after their creation; want none", n)
	}
}

// togetherWait bounds how long a create waits for a second one to be in
// flight before it goes on alone (and the test fails).
const togetherWait = 10 * time.Second

// countingRecords counts the registrar's reads, and holds the creates
// until two are in flight at once (or the first has waited togetherWait).
type countingRecords struct {
	records
	inFlight     atomic.Int32
	together     chan struct{} // closed once two creates were in flight
	once         sync.Once
	wereTogether atomic.Bool
	gets         atomic.Int32
}

func (c *countingRecords) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if c.inFlight.Add(1) >= 2 {
		c.wereTogether.Store(true)
		c.once.Do(func() { close(c.together) })
	}
	defer c.inFlight.Add(-1)
	select {
	case <-c.together:
	case <-time.After(togetherWait):
		c.once.Do(func() { close(c.together) }) // the others need not wait too
	}
	return c.records.Create(ctx, key, value)
}

func (c *countingRecords) Get(ctx context.Context, key string) (store.KV, error) {
	c.gets.Add(1)
	return c.records.Get(ctx, key)
}
