package clientapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/pipeline/bind"
)

const apiDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`

// TestSimulateWithStoredPolicies: the stored policy and override policy of
// web.yaml place and render a template that is not stored; nothing is written.
func TestSimulateWithStoredPolicies(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	c := h.dial(t, admin)
	web := fixture(t, "web.yaml")
	c.apply(t, web[strings.Index(string(web), "---"):], false) // the policies only
	resp, err := h.dial(t, viewer).placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(apiDeployment)})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	pl := resp.GetPlacement()
	if !pl.GetScheduled() || pl.GetPolicy().GetName() != "web" || len(pl.GetClusters()) != 1 || pl.GetClusters()[0].GetReplicas() != 4 {
		t.Fatalf("Simulate placement = %v; want web's policy placing 4 replicas on m1", pl)
	}
	if len(pl.GetRejections()) != 2 {
		t.Errorf("Simulate rejections = %v; want m2 and m3", pl.GetRejections())
	}
	if len(resp.GetRendered()) != 1 || resp.GetRendered()[0].GetCluster() != "m1" {
		t.Fatalf("Simulate rendered = %v; want m1", resp.GetRendered())
	}
	rendered := string(resp.GetRendered()[0].GetObjectsJson()[0])
	if !strings.Contains(rendered, `"image":"registry.example.com/nginx:1.27"`) || !strings.Contains(rendered, `"replicas":4`) {
		t.Errorf("Simulate rendered m1 = %s; want the override's registry and 4 replicas", rendered)
	}
	if _, err := c.objects.Get(ctx(t), &hubv1.GetRequest{Ref: webRef}); err == nil {
		t.Errorf("Simulate stored the template")
	}
}

// TestSimulateGivenPoliciesAndClusters: given objects replace stored ones;
// given clusters replace the stored snapshot; a Divided placement revises
// each cluster's replicas.
func TestSimulateGivenPoliciesAndClusters(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	c := h.dial(t, admin)
	c.apply(t, fixture(t, "web.yaml"), false)
	policies := `
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: e1}
spec: {region: eu}
status: {apiEnablements: [{groupVersion: apps/v1, resources: [{name: deployments, kind: Deployment}]}]}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: e2}
spec: {region: eu}
status: {apiEnablements: [{groupVersion: apps/v1, resources: [{name: deployments, kind: Deployment}]}]}
`
	resp, err := c.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(apiDeployment), Policies: []byte(policies)})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	got := map[string]int32{}
	for _, cp := range resp.GetPlacement().GetClusters() {
		got[cp.GetCluster()] = cp.GetReplicas()
	}
	if len(got) != 2 || got["e1"] != 2 || got["e2"] != 2 {
		t.Fatalf("Simulate placement = %v (%s); want e1 and e2 with 2 each", got, resp.GetPlacement().GetMessage())
	}
	for _, r := range resp.GetRendered() {
		var obj struct {
			Spec struct {
				Replicas int `json:"replicas"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(r.GetObjectsJson()[0], &obj); err != nil || obj.Spec.Replicas != 2 {
			t.Errorf("Simulate rendered %s replicas = %d, %v; want 2", r.GetCluster(), obj.Spec.Replicas, err)
		}
	}
}

func TestSimulateReportsInvalidInputs(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	resp, err := c.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(apiDeployment), Policies: fixture(t, "invalid-policy.yaml")})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	if resp.GetPlacement() != nil || len(resp.GetInputs()) != 3 || resp.GetInputs()[2].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
		t.Errorf("Simulate with an invalid policy = %v; want the policy REJECTED and no placement", resp)
	}
	_, err = c.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: fixture(t, "web.yaml")})
	if err == nil {
		t.Errorf("Simulate with three templates = nil error; want InvalidArgument")
	}
}

// TestSimulateNamespace: with namespace auto-propagation on, a Namespace
// that no ClusterPropagationPolicy matches is placed on every cluster, as
// the detector places it, with no policy named; a skipped one, and any
// with auto-propagation off, is not.
func TestSimulateNamespace(t *testing.T) {
	filter, err := bind.NewFilter(bind.DefaultSkippedNamespaces)
	if err != nil {
		t.Fatal(err)
	}
	ns := func(name string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + name + `"}}`)
	}
	for _, tc := range []struct {
		name     string
		cfg      clientapi.Config
		template []byte
		clusters int
	}{
		{"auto-propagated", clientapi.Config{Namespaces: filter}, ns("shop"), 3},
		{"skipped", clientapi.Config{Namespaces: filter}, ns("kube-extra"), 0},
		{"auto-propagation off", clientapi.Config{}, ns("shop"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHub(t, tc.cfg)
			putClusters(t, h)
			resp, err := h.dial(t, viewer).placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: tc.template})
			if err != nil {
				t.Fatalf("Simulate: %v", err)
			}
			pl := resp.GetPlacement()
			if len(pl.GetClusters()) != tc.clusters || pl.GetPolicy() != nil || pl.GetScheduled() != (tc.clusters > 0) {
				t.Errorf("Simulate(%s) = %v; want %d clusters, scheduled %v, no policy", tc.template, pl, tc.clusters, tc.clusters > 0)
			}
		})
	}
}

// TestSimulateSeesLiveness: Simulate schedules on the clusters as the
// scheduling loop sees them, leases included: m2, whose agent holds no
// lease, is unreachable and gets nothing, as the loop would decide.
func TestSimulateSeesLiveness(t *testing.T) {
	h := clusterHub(t) // a lease for m1 only
	policy := `
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [m1, m2]}}
`
	resp, err := h.dial(t, admin).placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(apiDeployment), Policies: []byte(policy)})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	pl := resp.GetPlacement()
	if len(pl.GetClusters()) != 1 || pl.GetClusters()[0].GetCluster() != "m1" {
		t.Errorf("Simulate placement = %v; want m1 only (m2 has no lease)", pl.GetClusters())
	}
	var m2 []string
	for _, r := range pl.GetRejections() {
		if r.GetCluster() == "m2" {
			m2 = r.GetReasons()
		}
	}
	if !strings.Contains(strings.Join(m2, "; "), "cluster.karmada.io/unreachable") {
		t.Errorf("Simulate rejection of m2 = %q; want the unreachable taint", m2)
	}
}
