package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// webRulesYAML is a user's customization of Deployments (Karmada's Lua
// contract): a retention rule that keeps the member's value of the label
// retainLabel, and a health rule that wants at least minReady ready
// replicas.
func webRulesYAML(retainLabel string, minReady int) string {
	return fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: web-rules}
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    retention:
      luaScript: |
        function Retain(desiredObj, observedObj)
          local kept = observedObj.metadata.labels and observedObj.metadata.labels[%[1]q]
          if kept ~= nil then
            if desiredObj.metadata.labels == nil then desiredObj.metadata.labels = {} end
            desiredObj.metadata.labels[%[1]q] = kept
          end
          return desiredObj
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return observedObj.status ~= nil and observedObj.status.readyReplicas ~= nil and observedObj.status.readyReplicas >= %[2]d
        end
---
`, retainLabel, minReady)
}

// labelledWebYAML is a Deployment of one replica labelled tier=web and
// owner=dev, placed on cluster.
func labelledWebYAML(image, cluster string) string {
	return deploymentYAML("web", image, 1, "tier", "web", "owner", "dev") + fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [%s]}}
---
`, cluster)
}

// TestCustomizationsRunInTheAgent is issue 13's first point against real
// processes (a hub, an agent, a kit member): a user's
// ResourceInterpreterCustomization reaches the agent, whose retention rule
// keeps a label set in the member through drift repair and a template
// update; whose health rule makes a Deployment the built-in rule calls
// Healthy Unhealthy on the binding; whose edit takes effect in the running
// agent, never restarted; and a webhook the member cannot reach is named
// in the binding's status. Each subtest runs whatever the one before
// found.
func TestCustomizationsRunInTheAgent(t *testing.T) {
	f := newFixture(t, 1)
	ctx := ctxFor(t)
	m, agent := f.env.Clusters[0], f.agents[0]
	pid := agent.pid()
	f.admin.apply(ctx, webRulesYAML("tier", 1))
	f.admin.apply(ctx, labelledWebYAML("nginx:1.27", m.Name))
	waitDeployment(t, m, "web", "1 ready replica of nginx:1.27", labelsAre("web", "dev", "nginx:1.27", 1))
	waitHealth(t, f, m.Name, "Healthy")

	t.Run("RetentionKeepsTheMembersLabel", func(t *testing.T) {
		// Another writer labels it tier=canary and changes the image:
		// once the image is back, drift repair ran, and kept the tier.
		editDeployment(t, m, "web", func(d *appsv1.Deployment) {
			d.Labels["tier"] = "canary"
			d.Spec.Template.Spec.Containers[0].Image = "nginx:edited"
		})
		waitDeployment(t, m, "web", "image reverted, tier canary retained", labelsAre("canary", "dev", "nginx:1.27", -1))
		f.admin.apply(ctx, labelledWebYAML("httpd:2.4", m.Name))
		waitDeployment(t, m, "web", "new image, tier canary retained", labelsAre("canary", "dev", "httpd:2.4", 1))
	})
	t.Run("HealthRuleMakesItUnhealthy", func(t *testing.T) {
		// One ready replica: Healthy for the built-in rule, not for one
		// that wants two.
		f.admin.apply(ctx, webRulesYAML("tier", 2))
		waitHealth(t, f, m.Name, "Unhealthy")
	})
	t.Run("EditedRulesApplyWithoutRestart", func(t *testing.T) {
		// Now the rules keep owner, not tier, and want one ready replica.
		f.admin.apply(ctx, webRulesYAML("owner", 1))
		waitHealth(t, f, m.Name, "Healthy")
		editDeployment(t, m, "web", func(d *appsv1.Deployment) {
			d.Labels["owner"] = "ops"
			d.Spec.Template.Spec.Containers[0].Image = "nginx:edited"
		})
		waitDeployment(t, m, "web", "image reverted, owner ops retained, tier back to web", labelsAre("web", "ops", "httpd:2.4", -1))
		if agent.exited() || agent.pid() != pid || agent.count("agent started") != 1 {
			t.Errorf("the agent restarted (pid %d, was %d; exited %v; started %d times); the edits must take effect in the running agent",
				agent.pid(), pid, agent.exited(), agent.count("agent started"))
		}
	})
	t.Run("UnreachableWebhookSaidInTheStatus", func(t *testing.T) {
		// A Retain webhook for ConfigMaps that nothing serves: the agent
		// calls it before updating one, and the binding says why the
		// update failed.
		f.admin.apply(ctx, settingsYAML("a", m.Name))
		poll(t, memberWait, m.Name+": configmap settings created", func() (bool, string) {
			cm, err := m.Clientset().CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return cm.Data["value"] == "a", fmt.Sprint(cm.Data)
		})
		addr := closedAddr(t)
		f.admin.apply(ctx, retainWebhookYAML(addr))
		f.admin.apply(ctx, settingsYAML("b", m.Name))
		binding := &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "settings-configmap"}
		poll(t, memberWait, "hub: settings' binding says the webhook is unreachable from "+m.Name, func() (bool, string) {
			item, err := bindingItem(f, binding, m.Name)
			if err != nil {
				return false, err.Error()
			}
			msg, _ := item["appliedMessage"].(string)
			return item["applied"] != true && strings.Contains(msg, "webhook is unreachable from this member cluster") &&
				strings.Contains(msg, addr), fmt.Sprint(item)
		})
	})
}

// settingsYAML is the ConfigMap settings, data.value value, placed on
// cluster.
func settingsYAML(value, cluster string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {value: %q}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: settings, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: settings}]
  placement: {clusterAffinity: {clusterNames: [%s]}}
---
`, value, cluster)
}

// retainWebhookYAML is an interpreter webhook for the Retain of
// ConfigMaps at addr.
func retainWebhookYAML(addr string) string {
	return fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterWebhookConfiguration
metadata: {name: configmap-retain}
webhooks:
- name: retain.example.com
  clientConfig: {url: "https://%s/interpret"}
  rules: [{operations: [Retain], apiGroups: [""], apiVersions: [v1], kinds: [ConfigMap]}]
  interpreterContextVersions: [v1alpha1]
  timeoutSeconds: 2
---
`, addr)
}

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// bindingItem is the aggregated status item of cluster in binding.
func bindingItem(f *fixture, binding *hubv1.ObjectRef, cluster string) (map[string]any, error) {
	b, err := f.admin.get(context.Background(), binding)
	if err != nil {
		return nil, err
	}
	items, _, _ := unstructured.NestedSlice(b.Object, "status", "aggregatedStatus")
	for _, it := range items {
		if m, _ := it.(map[string]any); m["clusterName"] == cluster {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no item of %s in %v", cluster, items)
}

// labelsAre is a condition on a Deployment's tier and owner labels, image
// and ready replicas (-1: any).
func labelsAre(tier, owner, image string, ready int32) func(*appsv1.Deployment) (bool, string) {
	return func(d *appsv1.Deployment) (bool, string) {
		img := d.Spec.Template.Spec.Containers[0].Image
		return d.Labels["tier"] == tier && d.Labels["owner"] == owner && img == image && (ready < 0 || d.Status.ReadyReplicas == ready),
			fmt.Sprintf("tier %q, owner %q, image %s, ready %d", d.Labels["tier"], d.Labels["owner"], img, d.Status.ReadyReplicas)
	}
}

// waitHealth polls web's binding until the health reported for cluster
// is want.
func waitHealth(t *testing.T, f *fixture, cluster, want string) {
	t.Helper()
	binding := &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "web-deployment"}
	poll(t, memberWait, fmt.Sprintf("hub: web's binding: %s health %s", cluster, want), func() (bool, string) {
		item, err := bindingItem(f, binding, cluster)
		if err != nil {
			return false, err.Error()
		}
		return item["health"] == want, fmt.Sprint(item)
	})
}
