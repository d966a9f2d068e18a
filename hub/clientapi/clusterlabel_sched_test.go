package clientapi_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/detector"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/scheduler"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter"
)

// edgeWeb is a Deployment and a policy that duplicates it to the clusters
// labelled tier=edge.
const edgeWeb = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity:
      labelSelector: {matchLabels: {tier: edge}}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

// TestClusterLabelMovesWorkload: with the real detector and scheduling
// loop on the hub's etcd, relabelling clusters through ClusterService.Label
// moves a Duplicated workload whose clusterAffinity selects on the label.
func TestClusterLabelMovesWorkload(t *testing.T) {
	leases := liveness.New(liveness.Config{})
	h := startHub(t, clientapi.Config{Leases: leases})
	c := h.dial(t, admin)
	for name, tier := range map[string]string{"m1": "edge", "m2": "core"} {
		rec := `{"apiVersion":"cluster.tether.io/v1alpha1","kind":"Cluster","metadata":{"name":"` + name + `","labels":{"tier":"` + tier + `"}}}`
		if _, err := h.st.Put(ctx(t), store.ClusterKey(name), []byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	beat := func() {
		for _, name := range []string{"m1", "m2"} {
			leases.Heartbeat(name, &agentv1.Heartbeat{
				Conditions:      []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
				ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"pods": "100"}},
				ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: "apps/v1",
					Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
			})
		}
	}
	beat()
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, "detector", detector.New(h.st, runView(t, h.st), interp, hclog.NewNullLogger()).Run)
	runUntilCleanup(t, "scheduler", scheduler.New(h.st, runView(t, h.st), leases, scheduler.Config{}, hclog.NewNullLogger()).Run)
	if resp := c.apply(t, []byte(edgeWeb), false); len(resp.GetResults()) != 2 {
		t.Fatalf("apply = %v", outcomes(resp))
	}
	waitPlaced(t, c, beat, "m1")

	steps := []struct {
		cluster, tier string
		want          []string
	}{
		{"m2", "edge", []string{"m1", "m2"}},
		{"m1", "core", []string{"m2"}},
	}
	for _, st := range steps {
		if _, err := c.clusters.Label(ctx(t), &hubv1.LabelRequest{Name: st.cluster, Set: map[string]string{"tier": st.tier}, Overwrite: true}); err != nil {
			t.Fatalf("Label(%s tier=%s) = %v", st.cluster, st.tier, err)
		}
		waitPlaced(t, c, beat, st.want...)
	}
}

// waitPlaced polls web's placement, heartbeating as agents do, until it is
// on exactly want, for up to 20 s.
func waitPlaced(t *testing.T, c *client, beat func(), want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var got []string
	for {
		beat()
		resp, err := c.placements.GetPlacement(ctx(t), &hubv1.GetPlacementRequest{Template: webRef})
		if err != nil {
			t.Fatalf("GetPlacement(web) = %v", err)
		}
		got = got[:0]
		for _, pc := range resp.GetPlacement().GetClusters() {
			got = append(got, pc.GetCluster())
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("web placed on %v; want %v (%s)", got, want, resp.GetPlacement().GetMessage())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runUntilCleanup runs fn until the test ends, then cancels it and waits.
// runView runs a replica's view of st until the test ends.
func runView(t *testing.T, st *store.Store) *view.View {
	t.Helper()
	v, err := view.New(st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, "view", v.Run)
	return v
}

func runUntilCleanup(t *testing.T, what string, fn func(context.Context) error) {
	t.Helper()
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(rctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s Run = %v; want nil", what, err)
		}
	})
}

// dynamicWeb is a Deployment of 10 replicas requesting 1 CPU each, divided
// by the replicas each cluster can take (Karmada's dynamic weight).
func dynamicWeb(name string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `}
spec:
  replicas: 10
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx:1.27, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ` + name + `}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: ` + name + `}]
  placement:
    clusterAffinity: {clusterNames: [m1, m2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
`
}

// TestResourceModelsSteerTheEstimate: with the real detector and
// scheduling loop, resource models set through SetResourceModels are what
// the estimator grades the agent's reported node counts by: m1 sums as
// much free CPU as m2, but its one node of grade 1 ([1, 2) CPU free) holds
// a single 1-CPU replica, so a workload divided by available replicas
// goes (almost) all to m2 once m1 has models; before, it is split evenly.
func TestResourceModelsSteerTheEstimate(t *testing.T) {
	leases := liveness.New(liveness.Config{})
	h := startHub(t, clientapi.Config{Leases: leases})
	c := h.dial(t, admin)
	for _, name := range []string{"m1", "m2"} {
		rec := `{"apiVersion":"cluster.tether.io/v1alpha1","kind":"Cluster","metadata":{"name":"` + name + `"}}`
		if _, err := h.st.Put(ctx(t), store.ClusterKey(name), []byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	beat := func() {
		for _, name := range []string{"m1", "m2"} {
			hb := &agentv1.Heartbeat{
				Conditions:      []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
				ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"pods": "100", "cpu": "20"}},
				ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: "apps/v1",
					Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
			}
			if name == "m1" { // what m1's agent counts by the models it was sent
				hb.ResourceSummary.AllocatableModelings = []*agentv1.AllocatableModeling{{Grade: 0, Count: 0}, {Grade: 1, Count: 1}}
			}
			leases.Heartbeat(name, hb)
		}
	}
	beat()
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, "detector", detector.New(h.st, runView(t, h.st), interp, hclog.NewNullLogger()).Run)
	runUntilCleanup(t, "scheduler", scheduler.New(h.st, runView(t, h.st), leases, scheduler.Config{}, hclog.NewNullLogger()).Run)

	c.apply(t, []byte(dynamicWeb("before")), false)
	waitReplicas(t, c, beat, "before", func(r map[string]int32) bool { return r["m1"] == 5 && r["m2"] == 5 })

	if _, err := c.clusters.SetResourceModels(ctx(t), &hubv1.SetResourceModelsRequest{Name: "m1", Models: []*hubv1.ResourceModel{
		{Grade: 0, Ranges: []*hubv1.ResourceModelRange{{Name: "cpu", Min: "0", Max: "1"}}},
		{Grade: 1, Ranges: []*hubv1.ResourceModelRange{{Name: "cpu", Min: "1", Max: "2"}}},
	}}); err != nil {
		t.Fatalf("SetResourceModels(m1) = %v", err)
	}
	// The loop reads the models from its watch of clusters, not of
	// bindings: a template applied at once may be estimated before it has
	// them. Every template placed once it has them goes by them.
	for i := 0; ; i++ {
		name := fmt.Sprintf("after-%d", i)
		c.apply(t, []byte(dynamicWeb(name)), false)
		var placed map[string]int32
		waitReplicas(t, c, beat, name, func(r map[string]int32) bool { placed = r; return r["m1"]+r["m2"] == 10 })
		if placed["m1"] <= 1 {
			break
		}
		if i == 20 {
			t.Fatalf("%s placed %v; want at most 1 replica on m1 once its models say it has room for 1", name, placed)
		}
	}
}

// waitReplicas polls a Deployment's placement, heartbeating, until its
// replicas per cluster meet cond, for up to 20 s.
func waitReplicas(t *testing.T, c *client, beat func(), name string, cond func(map[string]int32) bool) {
	t.Helper()
	ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name}
	deadline := time.Now().Add(20 * time.Second)
	for {
		beat()
		resp, err := c.placements.GetPlacement(ctx(t), &hubv1.GetPlacementRequest{Template: ref})
		if err != nil {
			t.Fatalf("GetPlacement(%s) = %v", name, err)
		}
		got := map[string]int32{}
		for _, pc := range resp.GetPlacement().GetClusters() {
			got[pc.GetCluster()] = pc.GetReplicas()
		}
		if cond(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s placed %v (%s); want otherwise", name, got, resp.GetPlacement().GetMessage())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
