package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// tierRetainLua keeps the member's metadata.labels.tier: a user's retention
// rule (Karmada's Retain contract).
const tierRetainLua = `
        function Retain(desiredObj, observedObj)
          if observedObj.metadata.labels ~= nil and observedObj.metadata.labels.tier ~= nil then
            if desiredObj.metadata.labels == nil then desiredObj.metadata.labels = {} end
            desiredObj.metadata.labels.tier = observedObj.metadata.labels.tier
          end
          return desiredObj
        end`

// canaryUnhealthyLua calls a Deployment labelled tier=canary in the member
// Unhealthy, whatever its replicas say.
const canaryUnhealthyLua = `
        function InterpretHealth(observedObj)
          return observedObj.metadata.labels == nil or observedObj.metadata.labels.tier ~= "canary"
        end`

// webRulesYAML is the user's customization of Deployments: the retention
// rule when retain is set, the health rule when health is.
func webRulesYAML(retain bool, health string) string {
	s := `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: web-rules}
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
`
	if retain {
		s += `    retention:
      luaScript: |` + tierRetainLua + "\n"
	}
	if health != "" {
		s += `    healthInterpretation:
      luaScript: |` + health + "\n"
	}
	return s + "---\n"
}

// tierWebYAML is a Deployment labelled tier=web, placed on cluster.
func tierWebYAML(image, cluster string) string {
	return deploymentYAML("web", image, 1, "tier", "web") + fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [%s]}}
---
`, cluster)
}

// TestCustomizationsRunInTheAgent is issue 13's first point against real
// processes: a user's ResourceInterpreterCustomization reaches the agent,
// whose retention rule keeps a label set in the member through drift
// repair and a template update, whose health rule makes a Deployment that
// the built-in rule calls Healthy Unhealthy on the binding, and whose
// edits take effect in the running agent, never restarted.
func TestCustomizationsRunInTheAgent(t *testing.T) {
	f := newFixture(t, 1)
	ctx := ctxFor(t)
	m, agent := f.env.Clusters[0], f.agents[0]
	pid := agent.pid()
	f.admin.apply(ctx, webRulesYAML(true, ""))
	f.admin.apply(ctx, tierWebYAML("nginx:1.27", m.Name))
	waitDeployment(t, m, "web", "1 ready replica of nginx:1.27, tier web", tierIs("web", "nginx:1.27", 1))
	waitHealth(t, f, m.Name, "Healthy") // the built-in rule: ready

	// Another writer labels it tier=canary and changes the image; the
	// agent reverts the image (so drift repair ran) and keeps the tier.
	editDeployment(t, m, "web", func(d *appsv1.Deployment) {
		d.Labels["tier"] = "canary"
		d.Spec.Template.Spec.Containers[0].Image = "nginx:edited"
	})
	waitDeployment(t, m, "web", "image reverted, tier canary retained", tierIs("canary", "nginx:1.27", -1))
	f.admin.apply(ctx, tierWebYAML("httpd:2.4", m.Name))
	waitDeployment(t, m, "web", "new image, tier canary retained", tierIs("canary", "httpd:2.4", 1))

	// The customization edited: a health rule the running agent applies.
	f.admin.apply(ctx, webRulesYAML(true, canaryUnhealthyLua))
	waitHealth(t, f, m.Name, "Unhealthy")
	waitDeployment(t, m, "web", "still ready, tier canary", tierIs("canary", "httpd:2.4", 1))

	// Edited again, without the retention rule: the next drift repair
	// takes the tier back to the template's, and the health rule, seeing
	// tier web, says Healthy.
	f.admin.apply(ctx, webRulesYAML(false, canaryUnhealthyLua))
	editDeployment(t, m, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:edited" })
	waitDeployment(t, m, "web", "image reverted, tier back to web", tierIs("web", "httpd:2.4", -1))
	waitHealth(t, f, m.Name, "Healthy")
	if agent.exited() || agent.pid() != pid || agent.count("agent started") != 1 {
		t.Errorf("the agent restarted (pid %d, was %d; exited %v; started %d times); the edits must take effect in the running agent",
			agent.pid(), pid, agent.exited(), agent.count("agent started"))
	}
}

// tierIs is a condition on a Deployment's tier label, image and ready
// replicas (-1: any).
func tierIs(tier, image string, ready int32) func(*appsv1.Deployment) (bool, string) {
	return func(d *appsv1.Deployment) (bool, string) {
		img := d.Spec.Template.Spec.Containers[0].Image
		return d.Labels["tier"] == tier && img == image && (ready < 0 || d.Status.ReadyReplicas == ready),
			fmt.Sprintf("tier %q, image %s, ready %d", d.Labels["tier"], img, d.Status.ReadyReplicas)
	}
}

// waitHealth polls web's binding until the health the agent of cluster
// reported is want.
func waitHealth(t *testing.T, f *fixture, cluster, want string) {
	t.Helper()
	binding := &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "web-deployment"}
	poll(t, memberWait, fmt.Sprintf("hub: web's binding: %s health %s", cluster, want), func() (bool, string) {
		b, err := f.admin.get(context.Background(), binding)
		if err != nil {
			return false, err.Error()
		}
		items, _, _ := unstructured.NestedSlice(b.Object, "status", "aggregatedStatus")
		for _, it := range items {
			m, _ := it.(map[string]any)
			if m["clusterName"] == cluster {
				return m["health"] == want, fmt.Sprint(m)
			}
		}
		return false, fmt.Sprint(items)
	})
}
