// Package manifests holds the objects tests apply to a hub, as YAML, so
// that the CLI's tests and the fleet's tests apply the same ones. Each test
// gives the placement of WebPolicy: that is what it tests. Rolled is the
// paced rollout the fault and HA suites share.
package manifests

import (
	"fmt"
	"strings"
	"time"
)

// WebDeployment is the Deployment "web" (label app: web, one nginx:1.27
// container) with replicas, as one YAML document ending in a newline.
func WebDeployment(replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: %d
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
`, replicas)
}

// WebPolicy is the PropagationPolicy "web" that selects WebDeployment with
// placement, the YAML of its spec.placement (unindented; each line is
// indented under placement:), as one YAML document.
func WebPolicy(placement string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  placement:
`)
	for _, line := range strings.Split(strings.TrimRight(placement, "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	return b.String()
}

// Rolled is the Deployment name (one replica, image) placed on clusters
// by a PropagationPolicy of the same name, and paced by a Progressive
// RolloutPolicy of that name too: one cluster at a time, Healthy soak
// (minSuccessTime) before the next, deadline (progressDeadline) to get
// there, no failure tolerated. It is the rollout the fault and HA suites
// run under their faults.
func Rolled(name, image string, clusters []string, soak, deadline time.Duration) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default, labels: {app: %[1]s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: %[2]s}]}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [%[3]s]}}
---
apiVersion: policy.tether.io/v1alpha1
kind: RolloutPolicy
metadata: {name: %[1]s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s}]
  rolloutStrategy:
    type: Progressive
    progressive: {maxConcurrency: 1, minSuccessTime: %[4]s, progressDeadline: %[5]s, maxFailures: 0}
`, name, image, strings.Join(clusters, ", "), soak, deadline)
}
