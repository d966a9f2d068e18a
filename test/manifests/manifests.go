// Package manifests holds the objects tests apply to a hub, as YAML, so
// that the CLI's tests and the fleet's tests apply the same ones. Each test
// gives the placement of WebPolicy: that is what it tests.
package manifests

import (
	"fmt"
	"strings"
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
