package clientapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/detector"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter"
)

// claimPolicy is a PropagationPolicy selecting apiDeployment's web and
// duplicating it to one named cluster, with an explicit priority.
func claimPolicy(name, cluster, priority string) string {
	return `apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ` + name + `, namespace: default}
spec:
  priority: ` + priority + `
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [` + cluster + `]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`
}

// TestSimulateHonoursStoredClaim: web is bound (by the real detector) to
// policy "first"; a later policy "second" of higher priority, without
// preemption, matches it too. The detector keeps the claim, so Simulate
// must report "first" and its cluster, not the policy an unclaimed
// template would go to.
func TestSimulateHonoursStoredClaim(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	c := h.dial(t, admin)
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	runUntilCleanup(t, "detector", detector.New(h.st, runView(t, h.st), interp, hclog.NewNullLogger()).Run)
	c.apply(t, []byte(claimPolicy("first", "m1", "0")+"---\n"+apiDeployment), false)
	waitClaim(t, h, "first")
	c.apply(t, []byte(claimPolicy("second", "m2", "10")), false)

	resp, err := c.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(apiDeployment)})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	pl := resp.GetPlacement()
	if pl.GetPolicy().GetName() != "first" {
		t.Errorf("Simulate policy = %v; want the claiming policy first", pl.GetPolicy())
	}
	if len(pl.GetClusters()) != 1 || pl.GetClusters()[0].GetCluster() != "m1" {
		t.Errorf("Simulate clusters = %v; want m1 (first's)", pl.GetClusters())
	}
	waitClaim(t, h, "first") // the detector itself still keeps the claim
}

// waitClaim polls web's stored binding until it is claimed by
// PropagationPolicy default/policy, for up to 20 s.
func waitClaim(t *testing.T, h *hub, policy string) {
	t.Helper()
	key := store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"})
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got string
		if kv, err := h.st.Get(ctx(t), key); err == nil {
			var b workv1alpha1.ResourceBinding
			if err := json.Unmarshal(kv.Value, &b); err != nil {
				t.Fatalf("decode binding: %v", err)
			}
			got = b.Annotations[bind.AnnotationPPName]
		}
		if got == policy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("web's binding claimed by %q; want %q", got, policy)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
