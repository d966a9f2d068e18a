package clientapi_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/certs"
)

// agentHeartbeat is a heartbeat whose topology proposes labels and whose
// API enablements list kinds of example.com/v1: a new kind makes the
// registrar rewrite the record, as a CRD installed in the member does.
func agentHeartbeat(labels map[string]string, kinds ...string) *agentv1.Heartbeat {
	hb := &agentv1.Heartbeat{Topology: &agentv1.Topology{Region: "eu", Labels: labels}}
	for _, k := range kinds {
		hb.ApiEnablements = append(hb.ApiEnablements, &agentv1.APIEnablement{
			GroupVersion: "example.com/v1", Resources: []*agentv1.APIResource{{Name: k + "s", Kind: k}}})
	}
	return hb
}

// TestClusterEditsSurviveAgent: the agent's labels are the initial value
// of a new record; after an admin's Label and Annotate, neither heartbeats
// proposing other labels (and making the registrar rewrite the record),
// nor the agent registering again, nor a new registrar (a hub restart or a
// new leader) change them.
func TestClusterEditsSurviveAgent(t *testing.T) {
	leases := liveness.New(liveness.Config{})
	h := startHub(t, clientapi.Config{Leases: leases})
	c := h.dial(t, admin)
	ctx := ctx(t)
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := membership.NewRegistry(h.st, ca, membership.Config{}, hclog.NewNullLogger())
	csr, _, err := certs.NewCSR("edge-1")
	if err != nil {
		t.Fatal(err)
	}
	agentLabels := map[string]string{"tier": "edge", "site": "lyon"}
	register := func() {
		t.Helper()
		tok, _, err := reg.CreateToken(ctx, membership.TokenOptions{TTL: time.Hour, Uses: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Register(ctx, membership.Request{Token: tok, Cluster: "edge-1", CSRPEM: csr,
			Topology: &agentv1.Topology{Region: "eu", Labels: agentLabels}}); err != nil {
			t.Fatalf("Register(edge-1): %v", err)
		}
	}
	register()
	stopRegistrar := runRegistrar(t, h.st, leases)
	waitRecord(t, h.st, leases, agentHeartbeat(agentLabels, "Widget"), "the first heartbeat's APIs", func(r clusterv1alpha1.Cluster) bool { return len(r.Status.APIEnablements) == 1 })
	if rec := readRecord(t, h.st); !maps.Equal(rec.Labels, agentLabels) {
		t.Fatalf("registered record labels = %v; want the agent's %v", rec.Labels, agentLabels)
	}

	if _, err := c.clusters.Label(ctx, &hubv1.LabelRequest{Name: "edge-1", Set: map[string]string{"tier": "core"},
		Remove: []string{"site"}, Overwrite: true}); err != nil {
		t.Fatalf("Label(edge-1) = %v", err)
	}
	if _, err := c.clusters.Annotate(ctx, &hubv1.AnnotateRequest{Name: "edge-1", Set: map[string]string{"owner": "team-a"}}); err != nil {
		t.Fatalf("Annotate(edge-1) = %v", err)
	}
	want := map[string]string{"tier": "core"}
	check := func(after string) {
		t.Helper()
		rec := readRecord(t, h.st)
		if !maps.Equal(rec.Labels, want) || rec.Annotations["owner"] != "team-a" {
			t.Errorf("after %s: labels %v, annotations %v; want %v and owner=team-a kept", after, rec.Labels, rec.Annotations, want)
		}
		got, err := c.clusters.GetCluster(ctx, &hubv1.GetClusterRequest{Name: "edge-1"})
		if err != nil || !maps.Equal(got.GetCluster().GetLabels(), want) {
			t.Errorf("after %s: GetCluster labels = %v, %v; want %v", after, got.GetCluster().GetLabels(), err, want)
		}
	}

	// The agent keeps proposing its labels, and installs a CRD: the
	// registrar rewrites the record's API enablements, not its labels.
	waitRecord(t, h.st, leases, agentHeartbeat(agentLabels, "Widget", "Gadget"), "the new CRD recorded", func(r clusterv1alpha1.Cluster) bool { return len(r.Status.APIEnablements) == 2 })
	check("a heartbeat proposing other labels")

	// The agent registers again (reinstalled with the same key).
	register()
	check("the agent registering again")

	// The hub restarts: a new registrar meets the cluster again.
	stopRegistrar()
	runRegistrar(t, h.st, leases)
	waitRecord(t, h.st, leases, agentHeartbeat(agentLabels, "Widget", "Gadget", "Gizmo"), "the restarted registrar's write", func(r clusterv1alpha1.Cluster) bool { return len(r.Status.APIEnablements) == 3 })
	check("a hub restart")
}

// runRegistrar runs a registrar until stopped or the test ends.
func runRegistrar(t *testing.T, st *store.Store, leases *liveness.Leases) (stop func()) {
	t.Helper()
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- membership.NewRegistrar(st, leases, hclog.NewNullLogger()).Run(rctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("registrar Run = %v; want nil", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func readRecord(t *testing.T, st *store.Store) clusterv1alpha1.Cluster {
	t.Helper()
	kv, err := st.Get(context.Background(), store.ClusterKey("edge-1"))
	if err != nil {
		t.Fatalf("read cluster record: %v", err)
	}
	var c clusterv1alpha1.Cluster
	if err := json.Unmarshal(kv.Value, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitRecord heartbeats hb, as a connected agent does, until the record
// meets cond, for up to 20 s. (A registrar takes only heartbeats received
// after it started.)
func waitRecord(t *testing.T, st *store.Store, leases *liveness.Leases, hb *agentv1.Heartbeat, what string, cond func(clusterv1alpha1.Cluster) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for leases.Heartbeat("edge-1", hb); !cond(readRecord(t, st)); leases.Heartbeat("edge-1", hb) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: record is %+v", what, readRecord(t, st))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestApplyClusterNamesResourceModels: a Karmada Cluster is not applied;
// the refusal says how to change a cluster, and names spec.resourceModels
// with the command that sets them.
func TestApplyClusterNamesResourceModels(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	const cluster = `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: edge-1}
spec:
  resourceModels:
  - grade: 0
    ranges: [{name: cpu, min: "0", max: "4"}]
`
	r := c.apply(t, []byte(cluster), false).GetResults()[0]
	if r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED || !strings.Contains(r.GetMessage(), "tetherctl label|annotate|taint cluster") {
		t.Errorf("apply Cluster = %s %q; want REJECTED saying how to change a cluster", r.GetOutcome(), r.GetMessage())
	}
	if fe := r.GetFieldErrors(); len(fe) != 1 || fe[0].GetField() != "spec.resourceModels" || !strings.Contains(fe[0].GetDetail(), "tetherctl cluster models") {
		t.Errorf("apply Cluster field errors = %v; want one naming spec.resourceModels", fe)
	}
}
