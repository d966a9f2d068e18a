package v1alpha1_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/api/codec"
)

// reported is a Cluster as the hub stores it after an agent's report.
const reported = `apiVersion: cluster.tether.io/v1alpha1
kind: Cluster
metadata:
  name: edge-1
  labels: {env: prod}
spec:
  id: 5c1f6b1e-kube-system-uid
  provider: onprem
  region: eu
  zones: [eu-a, eu-b]
  taints:
    - key: cluster.karmada.io/unreachable
      effect: NoSchedule
      timeAdded: "2026-01-02T03:04:05Z"
  resourceModels:
    - grade: 0
      ranges:
        - {name: cpu, min: "0", max: "2"}
    - grade: 1
      ranges:
        - {name: cpu, min: "2", max: "4"}
status:
  kubernetesVersion: v1.34.1
  apiEnablements:
    - groupVersion: apps/v1
      resources: [{name: deployments, kind: Deployment}]
  conditions:
    - type: Ready
      status: "True"
      reason: ClusterReady
      message: cluster is healthy and ready to accept workloads
      lastTransitionTime: "2026-01-02T03:04:05Z"
  nodeSummary: {totalNum: 3, readyNum: 3}
  resourceSummary:
    allocatable: {cpu: "12", memory: 48Gi, pods: "330"}
    allocated: {cpu: 2500m, pods: "12"}
    allocatableModelings: [{grade: 0, count: 1}, {grade: 1, count: 2}]
`

func TestDecodeClusterRoundTrip(t *testing.T) {
	obj, err := codec.Decode([]byte(reported))
	if err != nil {
		t.Fatalf("Decode(cluster) = %v; want no error", err)
	}
	c := obj.(*v1alpha1.Cluster)
	if errs := c.Validate(); len(errs) > 0 {
		t.Errorf("Validate(cluster) = %v; want no errors", errs)
	}
	if got := c.Status.ResourceSummary.Allocated.Cpu().MilliValue(); got != 2500 {
		t.Errorf("Decode(cluster) allocated cpu = %dm; want 2500m", got)
	}
	js, err := codec.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	want, err := yaml.YAMLToJSON([]byte(reported))
	if err != nil {
		t.Fatal(err)
	}
	var gotV, wantV any
	_ = json.Unmarshal(js, &gotV)
	_ = json.Unmarshal(want, &wantV)
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("Encode(Decode(cluster)) differs (-input +encoded):\n%s", diff)
	}
}
