package e2e

import (
	"fmt"
	"strings"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// The label that makes a member keep the replicas it has (an HPA's), in
// Karmada's spelling; the native Deployment rule and Tether's CloneSet
// customization both honour it.
const retainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"

// deploymentYAML is a Deployment template in namespace default; extraLabels
// go on the Deployment's own metadata.
func deploymentYAML(name, image string, replicas int, extraLabels ...string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default, labels: {app: %[1]s%[4]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: main, image: "%[2]s"}]}
---
`, name, image, replicas, labelsYAML(extraLabels))
}

// cloneSetYAML is an OpenKruise CloneSet template in namespace default.
func cloneSetYAML(name, image string, replicas int, extraLabels ...string) string {
	return fmt.Sprintf(`apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: %[1]s, namespace: default, labels: {app: %[1]s%[4]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: main, image: "%[2]s"}]}
---
`, name, image, replicas, labelsYAML(extraLabels))
}

// labelsYAML renders key, value pairs as flow-map entries after a first one.
func labelsYAML(kv []string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, ", %s: %q", kv[i], kv[i+1])
	}
	return b.String()
}

// weightedPolicyYAML divides the replicas of one template over two
// clusters with static weights.
func weightedPolicyYAML(name, apiVersion, kind, target, c1 string, w1 int, c2 string, w2 int) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: %s, kind: %s, name: %s}]
  placement:
    clusterAffinity: {clusterNames: [%s, %s]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [%[5]s]}, weight: %[7]d}
        - {targetCluster: {clusterNames: [%[6]s]}, weight: %[8]d}
---
`, name, apiVersion, kind, target, c1, c2, w1, w2)
}

// duplicatedPolicyYAML sends every Deployment labelled key=value to every
// listed cluster.
func duplicatedPolicyYAML(name, key, value string, clusters ...string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {%s: %s}}}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
`, name, key, value, strings.Join(clusters, ", "))
}

// imageTagOverrideYAML gives each cluster its own image tag for one
// template (Karmada's imageOverrider, component Tag).
func imageTagOverrideYAML(name, apiVersion, kind, target string, tags map[string]string) string {
	var rules strings.Builder
	for _, c := range sortedKeys(tags) {
		fmt.Fprintf(&rules, `  - targetCluster: {clusterNames: [%s]}
    overriders:
      imageOverrider: [{component: Tag, operator: replace, value: %q}]
`, c, tags[c])
	}
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: %s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: %s, kind: %s, name: %s}]
  overrideRules:
%s---
`, name, apiVersion, kind, target, rules.String())
}

// ref names a template in namespace default.
func ref(apiVersion, kind, name string) *hubv1.ObjectRef {
	return &hubv1.ObjectRef{ApiVersion: apiVersion, Kind: kind, Namespace: "default", Name: name}
}
