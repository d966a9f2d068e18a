package e2e

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var (
	webRef      = ref("apps/v1", "Deployment", "web")
	cloneSetRef = ref("apps.kruise.io/v1alpha1", "CloneSet", "cs")
)

// webYAML is the web Deployment (6 replicas, divided 2:1 over the two
// clusters) with its policy and per-cluster image tags.
func webYAML(f *fixture, image string, tags [2]string, extraLabels ...string) string {
	m1, m2 := f.env.Clusters[0].Name, f.env.Clusters[1].Name
	return deploymentYAML("web", image, 6, extraLabels...) +
		weightedPolicyYAML("web", "apps/v1", "Deployment", "web", m1, 2, m2, 1) +
		imageTagOverrideYAML("web-images", "apps/v1", "Deployment", "web", map[string]string{m1: tags[0], m2: tags[1]})
}

// testDeployment: a Deployment divided 2:1 with an image per cluster
// reaches both clusters with 4 and 2 replicas, becomes ready there (kwok),
// and the hub's aggregated status counts 6 ready; an image edited in a
// member is reverted; with retain-replicas, a member's own replica count
// survives both drift repair and a new version of the template.
func testDeployment(t *testing.T, f *fixture) {
	ctx := ctxFor(t)
	m1, m2 := f.env.Clusters[0], f.env.Clusters[1]
	f.admin.apply(ctx, webYAML(f, "nginx:1.27", [2]string{"a", "b"}))
	waitDeployment(t, m1, "web", "4 ready replicas of nginx:a", deploymentIs(4, "nginx:a", 4))
	waitDeployment(t, m2, "web", "2 ready replicas of nginx:b", deploymentIs(2, "nginx:b", 2))
	waitTemplateStatus(t, f.admin, webRef, "readyReplicas", 6)

	editDeployment(t, m1, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:edited" })
	waitDeployment(t, m1, "web", "the edited image reverted", deploymentIs(4, "nginx:a", -1))

	f.admin.apply(ctx, deploymentYAML("web", "nginx:1.27", 6, retainReplicasLabel, "true"))
	waitDeployment(t, m1, "web", "the retain-replicas label applied", func(d *appsv1.Deployment) (bool, string) {
		return d.Labels[retainReplicasLabel] == "true", d.Labels[retainReplicasLabel]
	})
	// An HPA scales to 7; the same write changes the image, which the
	// agent must revert: once the image is back, the repair has run, and
	// it must have kept the 7.
	editDeployment(t, m1, "web", func(d *appsv1.Deployment) {
		d.Spec.Replicas = new(int32(7))
		d.Spec.Template.Spec.Containers[0].Image = "nginx:edited"
	})
	waitDeployment(t, m1, "web", "image reverted, 7 replicas retained", deploymentIs(7, "nginx:a", -1))
	// A new template version keeps the member's count too.
	f.admin.apply(ctx, deploymentYAML("web", "httpd:2.4", 6, retainReplicasLabel, "true"))
	waitDeployment(t, m1, "web", "new image, 7 replicas retained, all ready", deploymentIs(7, "httpd:a", 7))
	waitDeployment(t, m2, "web", "new image, 2 ready", deploymentIs(2, "httpd:b", 2))
	waitTemplateStatus(t, f.admin, webRef, "readyReplicas", 9)
}

// testCloneSet: a CloneSet (CRD installed in the members, no Kruise
// controller) is divided 2:1 through Tether's built-in customization; the
// member statuses, written here as the Kruise controller would, add up on
// the hub; with retain-replicas a member's count survives drift repair.
func testCloneSet(t *testing.T, f *fixture) {
	ctx := ctxFor(t)
	m1, m2 := f.env.Clusters[0], f.env.Clusters[1]
	for _, c := range f.env.Clusters {
		installCRD(t, c, "cloneset-crd.json")
	}
	template := cloneSetYAML("cs", "nginx:1.27", 3, retainReplicasLabel, "true")
	policy := weightedPolicyYAML("cs", "apps.kruise.io/v1alpha1", "CloneSet", "cs", m1.Name, 2, m2.Name, 1)
	// The hub learns that a cluster serves CloneSets from its agent's next
	// heartbeat. A Divided binding is not rebalanced when clusters change
	// (as in Karmada), so applying before both heartbeats came would place
	// all 3 replicas on whichever cluster reported first: wait until a
	// what-if places them 2:1.
	poll(t, memberWait, "hub: both clusters serve CloneSets (Simulate places 2:1)", func() (bool, string) {
		got, err := f.admin.simulate(ctx, template, policy)
		if err != nil {
			return false, err.Error()
		}
		return got[m1.Name] == 2 && got[m2.Name] == 1, fmt.Sprint(got)
	})
	f.admin.apply(ctx, template+policy)
	waitCloneSet(t, m1, "cs", "2 replicas", cloneSetIs(2, "nginx:1.27"))
	waitCloneSet(t, m2, "cs", "1 replica", cloneSetIs(1, "nginx:1.27"))
	setCloneSetReady(t, f, 2, 1)
	waitTemplateStatus(t, f.admin, cloneSetRef, "readyReplicas", 3)

	editCloneSet(t, m1, "cs", false, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
		setFirstImage(u, "nginx:edited")
	})
	waitCloneSet(t, m1, "cs", "image reverted, 5 replicas retained", cloneSetIs(5, "nginx:1.27"))
	setCloneSetReady(t, f, 5, 1)
	waitTemplateStatus(t, f.admin, cloneSetRef, "readyReplicas", 6)
}

// setCloneSetReady writes the status the Kruise controller would once
// every replica is ready, for the CloneSet "cs" of each cluster.
func setCloneSetReady(t *testing.T, f *fixture, ready ...int64) {
	t.Helper()
	for i, c := range f.env.Clusters {
		editCloneSet(t, c, "cs", true, func(u *unstructured.Unstructured) {
			n := ready[i]
			status := map[string]any{
				"observedGeneration": u.GetGeneration(), "replicas": n, "readyReplicas": n,
				"availableReplicas": n, "updatedReplicas": n, "updatedReadyReplicas": n,
			}
			_ = unstructured.SetNestedMap(u.Object, status, "status")
		})
	}
}
