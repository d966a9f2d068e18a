// Package manifests holds the workloads tests apply to a hub, as YAML, so
// that the CLI's tests and the fleet's tests apply the same objects. Each
// test writes the policy that places them: that is what it tests.
package manifests

import "fmt"

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
