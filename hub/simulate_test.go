package hub_test

import (
	"bytes"
	"context"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/pipeline/work"
)

// A Deployment divided 1:2 over two clusters, with an override for one of
// them, a label each cluster takes its own value of (valueFrom) and an
// apply strategy of its own.
const (
	simulateTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
  annotations: {apply.tether.io/strategy: Update}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.27}]
`
	simulatePolicies = `apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  conflictResolution: Overwrite
  placement:
    clusterAffinity: {clusterNames: [edge-1, edge-2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [edge-1]}, weight: 1}
        - {targetCluster: {clusterNames: [edge-2]}, weight: 2}
---
apiVersion: policy.tether.io/v1alpha1
kind: OverridePolicy
metadata: {name: web-edge-1, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [edge-1]}
    overriders:
      imageOverrider: [{component: Registry, operator: replace, value: registry.edge-1.example}]
  - overriders:
      labelsOverrider: [{operator: add, valueFrom: {cluster: {clusterName: {}}}}]
`
	simulateKey = "apps/Deployment/default/web"
)

// TestSimulateIsWhatTheAgentReceives: a template, its policy and an
// override policy are applied to a hub with two connected agents; each
// agent's stream delivers the template's work. Simulate of the same
// template then shows, for each cluster, exactly the manifest the agent
// received, byte for byte (ownership labels, pruned metadata, revised
// replicas, override), with the same apply options and replicas.
func TestSimulateIsWhatTheAgentReceives(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*replicaTimeout)
	defer cancel()
	r := runReplica(t, hubConfigWithEmbeddedEtcd(t))
	r.serving(t)
	streams := map[string]*agentStream{}
	for _, cluster := range []string{"edge-1", "edge-2"} {
		cert := r.registerAgent(t, ctx, cluster)
		s := r.openAgent(t, ctx, cert, &agentv1.Hello{AgentVersion: "test"})
		s.send(t, &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: deploymentHeartbeat()}})
		streams[cluster] = s
	}
	r.apply(t, ctx, simulateTemplate+"---\n"+simulatePolicies)
	received := map[string]*agentv1.WorkUpsert{}
	for cluster, s := range streams {
		received[cluster] = s.awaitWork(t, simulateKey)
	}

	adminTLS, err := r.adminConf(t).TLS()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hubv1.NewPlacementServiceClient(dial(t, r.addr, adminTLS)).Simulate(ctx, &hubv1.SimulateRequest{Template: []byte(simulateTemplate)})
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	replicas := map[string]int32{}
	for _, c := range resp.GetPlacement().GetClusters() {
		replicas[c.GetCluster()] = c.GetReplicas()
	}
	if want := map[string]int32{"edge-1": 1, "edge-2": 2}; len(replicas) != 2 || replicas["edge-1"] != 1 || replicas["edge-2"] != 2 {
		t.Errorf("Simulate placement = %v (%s); want %v", replicas, resp.GetPlacement().GetMessage(), want)
	}
	rendered := map[string]*hubv1.RenderedCluster{}
	for _, rc := range resp.GetRendered() {
		rendered[rc.GetCluster()] = rc
	}
	for cluster, up := range received {
		rc := rendered[cluster]
		if rc == nil {
			t.Errorf("Simulate rendered nothing for %s; its agent received %s", cluster, up.GetManifests()[0])
			continue
		}
		if len(rc.GetObjectsJson()) != len(up.GetManifests()) {
			t.Errorf("Simulate rendered %d objects for %s; its agent received %d", len(rc.GetObjectsJson()), cluster, len(up.GetManifests()))
			continue
		}
		if want := `"cluster":"` + cluster + `"`; !bytes.Contains(up.GetManifests()[0], []byte(want)) {
			t.Errorf("%s's agent received %s; want the label valueFrom gives it, %s", cluster, up.GetManifests()[0], want)
		}
		for i, m := range up.GetManifests() {
			if got := rc.GetObjectsJson()[i]; !bytes.Equal(got, m) {
				t.Errorf("Simulate rendered for %s:\n%s\nthe agent received:\n%s", cluster, got, m)
			}
		}
		opts := up.GetApplyOptions()
		if got, want := rc.GetApplyStrategy(), work.StrategyName(opts.GetStrategy()); got != want {
			t.Errorf("Simulate apply strategy for %s = %q; the agent received %q", cluster, got, want)
		}
		if got, want := rc.GetConflictResolution(), work.ConflictResolutionName(opts.GetConflictResolution()); got != want {
			t.Errorf("Simulate conflict resolution for %s = %q; the agent received %q", cluster, got, want)
		}
	}
}

// hubConfigWithEmbeddedEtcd is a hub of its own on an embedded etcd.
func hubConfigWithEmbeddedEtcd(t *testing.T) hub.Config {
	return hub.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0"}
}

// awaitWork reads until the hub sends the work of key, and returns it.
func (s *agentStream) awaitWork(t *testing.T, key string) *agentv1.WorkUpsert {
	t.Helper()
	for {
		if up := s.recv(t).GetWorkUpsert(); up.GetWorkKey() == key {
			return up
		}
	}
}

// deploymentHeartbeat is the heartbeat of a Ready cluster serving
// Deployments.
func deploymentHeartbeat() *agentv1.Heartbeat {
	return &agentv1.Heartbeat{AgentVersion: "test", KubernetesVersion: "v1.34.0",
		ApiEnablements: []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
		Conditions:     []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}}}
}
