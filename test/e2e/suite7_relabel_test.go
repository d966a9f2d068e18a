package e2e

import "testing"

// goldYAML is a Deployment duplicated to the clusters labelled lane=gold.
const goldYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: gold, labels: {app: gold}}
spec:
  replicas: 1
  selector: {matchLabels: {app: gold}}
  template:
    metadata: {labels: {app: gold}}
    spec:
      containers: [{name: gold, image: "nginx:1.27"}]
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: gold}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: gold}]
  placement:
    clusterAffinity: {labelSelector: {matchLabels: {lane: gold}}}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

// testRelabelMoves: a cluster label set on the hub (`tetherctl label
// cluster`) places a workload whose policy selects that label, and moving
// the label to another cluster moves the workload there, its first copy
// deleted by the agent (issue 13: a cluster label edit moves a workload).
func testRelabelMoves(t *testing.T, s *suite7) {
	gold := ref("apps/v1", "Deployment", "gold")
	s.tetherctl(t, "label", "cluster", edge1, "lane=gold")
	s.apply(t, goldYAML)
	s.waitPlacement(t, gold, "edge-1 only", func(p map[string]int32) bool { return len(p) == 1 && p[edge1] == 1 })
	s.waitMember(t, edge1, deploymentGVR, "gold", "present", exists)

	s.tetherctl(t, "label", "cluster", regional1, "lane=gold")
	t.Cleanup(func() { s.tetherctl(t, "label", "cluster", regional1, "lane-") })
	s.tetherctl(t, "label", "cluster", edge1, "lane-")
	s.waitPlacement(t, gold, "regional-1 only", func(p map[string]int32) bool { return len(p) == 1 && p[regional1] == 1 })
	s.waitMember(t, regional1, deploymentGVR, "gold", "present", exists)
	s.waitGone(t, edge1, deploymentGVR, "gold")
}
