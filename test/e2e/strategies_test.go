package e2e

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/kit"
)

// strategyYAML is a Deployment template labelled suite=strategies whose
// apply.tether.io/strategy annotation is strategy ("": none).
func strategyYAML(name, image string, replicas int, strategy string) string {
	annotations := ""
	if strategy != "" {
		annotations = fmt.Sprintf(", annotations: {apply.tether.io/strategy: %s}", strategy)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default, labels: {app: %[1]s, suite: strategies}%[4]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: main, image: "%[2]s"}]}
---
`, name, image, replicas, annotations)
}

// TestApplyStrategies is issue 13's sixth point against real processes (a
// hub, an agent, a kit member): each of the four strategies a template's
// apply.tether.io/strategy annotation chooses does what the README says in
// the member. ServerSideApply (no annotation) applies and repairs drift;
// Update writes with a full update and repairs drift; CreateOnly creates
// once and never writes the object again, whatever the template says;
// ReadOnly never creates or changes the member's object and reports the
// status of one that exists.
func TestApplyStrategies(t *testing.T) {
	f := newFixture(t, 1)
	ctx := ctxFor(t)
	m := f.env.Clusters[0]
	f.admin.apply(ctx, duplicatedPolicyYAML("strategies", "suite", "strategies", m.Name))

	t.Run("ServerSideApplyByDefault", func(t *testing.T) {
		f.admin.apply(ctx, strategyYAML("ssa", "nginx:1.27", 1, ""))
		waitDeployment(t, m, "ssa", "applied by tether-agent with server-side apply", both(deploymentIs(1, "nginx:1.27", -1), writtenBy(metav1.ManagedFieldsOperationApply)))
		editDeployment(t, m, "ssa", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:edited" })
		waitDeployment(t, m, "ssa", "drift repaired", deploymentIs(1, "nginx:1.27", -1))
	})
	t.Run("Update", func(t *testing.T) {
		f.admin.apply(ctx, strategyYAML("upd", "nginx:1.27", 1, "Update"))
		waitDeployment(t, m, "upd", "written by tether-agent with an update, never an apply",
			both(deploymentIs(1, "nginx:1.27", -1), writtenBy(metav1.ManagedFieldsOperationUpdate)))
		f.admin.apply(ctx, strategyYAML("upd", "httpd:2.4", 2, "Update"))
		waitDeployment(t, m, "upd", "template change updated", deploymentIs(2, "httpd:2.4", -1))
		editDeployment(t, m, "upd", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:edited" })
		waitDeployment(t, m, "upd", "drift repaired", both(deploymentIs(2, "httpd:2.4", -1), writtenBy(metav1.ManagedFieldsOperationUpdate)))
	})
	t.Run("CreateOnly", func(t *testing.T) {
		f.admin.apply(ctx, strategyYAML("once", "nginx:1.27", 1, "CreateOnly"))
		first := waitDeployment(t, m, "once", "created", deploymentIs(1, "nginx:1.27", -1))
		v1 := first.Annotations["tether.io/work-version"]
		f.admin.apply(ctx, strategyYAML("once", "httpd:2.4", 2, "CreateOnly"))
		heldNewVersion(t, f.agents[0], m, "once", v1)
		waitDeployment(t, m, "once", "never updated: the first version's content", func(d *appsv1.Deployment) (bool, string) {
			ok, got := deploymentIs(1, "nginx:1.27", -1)(d)
			return ok && d.Annotations["tether.io/work-version"] == v1, got + ", version " + d.Annotations["tether.io/work-version"]
		})
		// Gone from the member, it is created again, from the version held.
		if err := m.Clientset().AppsV1().Deployments("default").Delete(ctx, "once", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("%s: delete deployment once: %v", m.Name, err)
		}
		waitDeployment(t, m, "once", "created again from the new version", deploymentIs(2, "httpd:2.4", -1))
	})
	t.Run("ReadOnly", func(t *testing.T) {
		// A Deployment the member has and Tether never created: read, its
		// status reported, never written.
		deps := m.Clientset().AppsV1().Deployments("default")
		if _, err := deps.Create(ctx, memberDeployment("ro", "busybox:1.36", 2), metav1.CreateOptions{FieldManager: "e2e-editor"}); err != nil {
			t.Fatalf("%s: create deployment ro: %v", m.Name, err)
		}
		waitDeployment(t, m, "ro", "2 ready replicas", deploymentIs(2, "busybox:1.36", 2))
		f.admin.apply(ctx, strategyYAML("ro", "nginx:1.27", 1, "ReadOnly"))
		binding := &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "ro-deployment"}
		poll(t, memberWait, "hub: ro's binding reports the member's 2 ready replicas", func() (bool, string) {
			item, err := bindingItem(f, binding, m.Name)
			if err != nil {
				return false, err.Error()
			}
			ready, _, _ := unstructured.NestedInt64(item, "status", "readyReplicas")
			return item["applied"] == true && ready == 2, fmt.Sprint(item)
		})
		d, err := deps.Get(ctx, "ro", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: get deployment ro: %v", m.Name, err)
		}
		if ok, got := deploymentIs(2, "busybox:1.36", -1)(d); !ok || d.Labels["tether.io/work-key"] != "" ||
			d.Annotations["tether.io/work-key"] != "" || d.Annotations["resourcetemplate.karmada.io/generation"] != "" {
			t.Errorf("%s: deployment ro is %s, labels %v, annotations %v; want it as created (ReadOnly never writes)", m.Name, got, d.Labels, d.Annotations)
		}
		// One the member lacks: never created; the binding says why.
		f.admin.apply(ctx, strategyYAML("ghost", "nginx:1.27", 1, "ReadOnly"))
		binding = &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "ghost-deployment"}
		poll(t, memberWait, "hub: ghost's binding says it is not found in "+m.Name, func() (bool, string) {
			item, err := bindingItem(f, binding, m.Name)
			if err != nil {
				return false, err.Error()
			}
			msg, _ := item["appliedMessage"].(string)
			return item["applied"] != true && strings.Contains(msg, "read-only"), fmt.Sprint(item)
		})
		if _, err := deps.Get(ctx, "ghost", metav1.GetOptions{}); err == nil {
			t.Errorf("%s: deployment ghost exists; a ReadOnly template must never create it", m.Name)
		}
	})
}

// both is the conjunction of two conditions.
func both(a, b func(*appsv1.Deployment) (bool, string)) func(*appsv1.Deployment) (bool, string) {
	return func(d *appsv1.Deployment) (bool, string) {
		okA, gotA := a(d)
		okB, gotB := b(d)
		return okA && okB, gotA + "; " + gotB
	}
}

// writtenBy is a condition on how the agent's field manager last wrote a
// Deployment: with a server-side apply (Apply) or an update (Update), and
// not the other way.
func writtenBy(op metav1.ManagedFieldsOperationType) func(*appsv1.Deployment) (bool, string) {
	return func(d *appsv1.Deployment) (bool, string) {
		var ops []string
		for _, e := range d.ManagedFields {
			if e.Manager == "tether-agent" {
				ops = append(ops, string(e.Operation))
			}
		}
		return len(ops) == 1 && ops[0] == string(op), fmt.Sprintf("tether-agent's operations %v", ops)
	}
}

// heldNewVersion waits until the agent holds a version of name's work
// other than old and has applied it: each poll labels the member's object
// (a drift, which makes the agent apply the version it holds again) until
// the agent logs a drift repair of the work at another version.
func heldNewVersion(t *testing.T, a *agentProc, c *kit.Cluster, name, old string) {
	t.Helper()
	key := "apps/Deployment/default/" + name
	poke := 0
	poll(t, memberWait, fmt.Sprintf("%s: the agent applied a version of %s other than %s", c.Name, key, old), func() (bool, string) {
		for _, line := range strings.Split(a.logText(), "\n") {
			if strings.Contains(line, "drift repaired") && strings.Contains(line, key) && !strings.Contains(line, old) {
				return true, line
			}
		}
		poke++
		editDeployment(t, c, name, func(d *appsv1.Deployment) { d.Labels["poke"] = fmt.Sprint(poke) })
		return false, fmt.Sprintf("%d drift repairs logged", strings.Count(a.logText(), "drift repaired"))
	})
}

// memberDeployment is a Deployment created in a member by someone other
// than Tether.
func memberDeployment(name, image string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}},
			},
		},
	}
}
