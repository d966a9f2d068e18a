package ha_test

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// webName is the baseline Deployment, divided over the members with
// static weights, so that its placement is fixed and any change of it is
// a decision someone took.
const webName = "ha-web"

// loadLabel marks the load's ConfigMaps, which the load policy sends to
// every member.
const loadLabel = "ha.tether.io/load"

// baselineYAML is the baseline Deployment with its policy and the load's
// policy, over clusters.
func baselineYAML(clusters []string) string {
	var weights strings.Builder
	for _, c := range clusters {
		fmt.Fprintf(&weights, "        - {targetCluster: {clusterNames: [%s]}, weight: 1}\n", c)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default, labels: {app: %[1]s}}
spec:
  replicas: 4
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        resources: {requests: {cpu: 100m, memory: 64Mi}}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s}]
  placement:
    clusterAffinity: {clusterNames: [%[2]s]}
    clusterTolerations: [{key: %[5]s, operator: Exists, effect: NoExecute}]
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
%[3]s---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ha-load, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {%[4]s: "true"}}}]
  placement:
    clusterAffinity: {clusterNames: [%[2]s]}
    clusterTolerations: [{key: %[5]s, operator: Exists, effect: NoExecute}]
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, webName, strings.Join(clusters, ", "), weights.String(), loadLabel, drainKey)
}

// loadName is the name of the load's ConfigMap number i.
func loadName(i int) string { return fmt.Sprintf("ha-load-%03d", i) }

// loadYAML is the load's ConfigMap number i.
func loadYAML(i int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: %s, namespace: default, labels: {%s: "true"}}
data: {seq: "%d"}
`, loadName(i), loadLabel, i)
}
