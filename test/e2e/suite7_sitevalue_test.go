package e2e

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// siteYAML is a Deployment duplicated to every cluster and one
// OverridePolicy that sets its env SITE from each cluster's site label
// (valueFrom, issue 38).
const siteYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: site, labels: {app: site}}
spec:
  replicas: 1
  selector: {matchLabels: {app: site}}
  template:
    metadata: {labels: {app: site}}
    spec:
      containers: [{name: site, image: "nginx:1.27"}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: site}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: site}]
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: site}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: site}]
  overrideRules:
  - overriders:
      plaintext:
      - {path: /spec/template/spec/containers/0/env, operator: add, value: [{name: SITE}]}
      - path: /spec/template/spec/containers/0/env/0/value
        operator: add
        valueFrom: {clusterLabel: {key: site}}
`

// siteBarrierYAML is a ConfigMap duplicated to every cluster.
const siteBarrierYAML = `apiVersion: v1
kind: ConfigMap
metadata: {name: site-barrier}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: site-barrier}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: site-barrier}]
  placement: {}
`

// siteIs is a waitMember condition on the Deployment's env SITE.
func siteIs(want string) func(*unstructured.Unstructured) (bool, string) {
	return func(u *unstructured.Unstructured) (bool, string) {
		got := siteEnv(u)
		return got == want, "SITE=" + got
	}
}

// siteEnv is the value of env SITE of the first container, "" when unset.
func siteEnv(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	env, _ := cs[0].(map[string]any)["env"].([]any)
	for _, e := range env {
		if m, _ := e.(map[string]any); m["name"] == "SITE" {
			v, _ := m["value"].(string)
			return v
		}
	}
	return ""
}

// testSiteFromClusterLabel: one OverridePolicy gives each member's
// Deployment its own SITE from the member's site label, and relabelling
// edge-2 changes only edge-2's Deployment (the others keep their
// generation).
func testSiteFromClusterLabel(t *testing.T, s *suite7) {
	sites := map[string]string{edge1: "paris", edge2: "lyon", regional1: "ohio"}
	for c, site := range sites {
		s.tetherctl(t, "label", "cluster", c, "site="+site)
		t.Cleanup(func() { s.tetherctl(t, "label", "cluster", c, "site-") })
	}
	s.apply(t, siteYAML)
	t.Cleanup(func() { s.tetherctl(t, "delete", "deployment", "site") })
	generation := map[string]int64{}
	for c, site := range sites {
		u := s.waitMember(t, c, deploymentGVR, "site", "SITE="+site, siteIs(site))
		generation[c] = u.GetGeneration()
	}

	s.tetherctl(t, "label", "cluster", edge2, "site=grenoble", "--overwrite")
	s.waitMember(t, edge2, deploymentGVR, "site", "SITE=grenoble", siteIs("grenoble"))
	// A barrier: a ConfigMap applied after the relabel. The hub renders
	// store changes in revision order and each agent receives its works in
	// that order, so once the barrier is in edge-1 and regional-1, a work
	// re-rendered for them by the relabel would have reached them too.
	s.apply(t, siteBarrierYAML)
	t.Cleanup(func() { s.tetherctl(t, "delete", "configmap", "site-barrier") })
	for _, c := range []string{edge1, regional1} {
		s.waitMember(t, c, configMapGVR, "site-barrier", "present", exists)
		u := s.waitMember(t, c, deploymentGVR, "site", "present", exists)
		if got := siteEnv(u); got != sites[c] || u.GetGeneration() != generation[c] {
			t.Errorf("%s after relabelling edge-2: SITE=%s, generation %d; want SITE=%s unchanged at generation %d",
				c, got, u.GetGeneration(), sites[c], generation[c])
		}
	}
}
