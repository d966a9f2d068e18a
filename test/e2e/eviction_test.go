package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/kit"
)

// readyByRule is the label the user's health rule of gateRulesYAML asks
// for: a Deployment without it is Unhealthy whatever its replicas.
const readyByRule = "ready-by-rule"

// holdWindow is how long (wall time, polled) the eviction must be seen
// held while the rule says Unhealthy: long against the few seconds an
// agent takes to report a ready replica, short against the hub's default
// graceful eviction timeout (place.DefaultGracefulEvictionTimeout, 10
// min), so that neither explains what is seen.
const holdWindow = 15 * time.Second

// gateRulesYAML is a user's health rule for Deployments that ignores
// replicas: Healthy only when the object is labelled ready-by-rule=yes.
const gateRulesYAML = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: gate-rules}
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return observedObj.metadata.labels ~= nil and observedObj.metadata.labels["` + readyByRule + `"] == "yes"
        end
---
`

// gateYAML is the Deployment gate (one replica, extraLabels on its
// metadata) divided, aggregated, over clusters: it runs on one of them.
func gateYAML(clusters []string, extraLabels ...string) string {
	return deploymentYAML("gate", "nginx:1.27", 1, extraLabels...) + fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: gate, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: gate}]
  placement:
    clusterAffinity: {clusterNames: [%s]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
---
`, strings.Join(clusters, ", "))
}

// TestUserHealthDrivesGracefulEviction is issue 13's "a user
// healthInterpretation drives graceful eviction" against real processes
// (a hub, two agents, two kit members): a Deployment runs on member A; A
// is drained (NoExecute taint), so the Deployment moves to B while A's
// copy waits in a graceful eviction task for B to be Healthy. The user's
// rule calls B's copy Unhealthy although its replica is ready (the
// built-in rule would call it Healthy): the task and A's copy stay. Once
// the template carries the label the rule wants, B is Healthy and the
// eviction completes: the task ends and A's agent deletes A's copy.
func TestUserHealthDrivesGracefulEviction(t *testing.T) {
	f := newFixture(t, 2)
	ctx := ctxFor(t)
	names := []string{f.env.Clusters[0].Name, f.env.Clusters[1].Name}
	f.admin.apply(ctx, gateRulesYAML)
	f.admin.apply(ctx, gateYAML(names))
	a, b := gatePlaced(t, f)

	tetherctl(t, f, "taint", a.Name, "tether.io/drain=true:NoExecute")
	waitDeployment(t, b, "gate", "1 ready replica (the replacement)", deploymentIs(1, "nginx:1.27", 1))
	waitGateHealth(t, f, b.Name, "Healthy", "Unhealthy")
	// B's replica is ready and its health reported, so the built-in rule
	// would end the eviction now; the user's rule holds it.
	deadline := time.Now().Add(holdWindow)
	for time.Now().Before(deadline) {
		if tasks := evictionTasks(t, f); len(tasks) != 1 || tasks[0] != a.Name {
			t.Fatalf("gate's binding has eviction tasks from %v while its rule calls %s Unhealthy; want the task from %s kept", tasks, b.Name, a.Name)
		}
		if _, err := a.Clientset().AppsV1().Deployments("default").Get(ctx, "gate", metav1.GetOptions{}); err != nil {
			t.Fatalf("%s: gate's copy while its replacement on %s is Unhealthy by the user's rule: %v; want it kept", a.Name, b.Name, err)
		}
		time.Sleep(time.Second)
	}
	waitGateHealth(t, f, b.Name, "Unhealthy")

	f.admin.apply(ctx, gateYAML(names, readyByRule, "yes"))
	waitGateHealth(t, f, b.Name, "Healthy")
	poll(t, memberWait, "hub: gate's eviction task from "+a.Name+" ended", func() (bool, string) {
		tasks := evictionTasks(t, f)
		return len(tasks) == 0, fmt.Sprint(tasks)
	})
	poll(t, memberWait, a.Name+": gate's copy deleted", func() (bool, string) {
		_, err := a.Clientset().AppsV1().Deployments("default").Get(ctx, "gate", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprint("still there: ", err)
	})
	waitDeployment(t, b, "gate", "kept, labelled by the template", func(d *appsv1.Deployment) (bool, string) {
		return d.Labels[readyByRule] == "yes", fmt.Sprint(d.Labels)
	})
}

// gateBinding is the ResourceBinding of the Deployment gate.
var gateBinding = &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "gate-deployment"}

// evictionTasks lists the fromCluster of gate's binding's graceful
// eviction tasks, failing the test on a read error or on a task whose own
// grace period is shorter than holdWindow.
func evictionTasks(t *testing.T, f *fixture) []string {
	t.Helper()
	bnd, err := f.admin.get(context.Background(), gateBinding)
	if err != nil {
		t.Fatalf("get gate's binding: %v", err)
	}
	tasks, _, err := unstructured.NestedSlice(bnd.Object, "spec", "gracefulEvictionTasks")
	if err != nil {
		t.Fatalf("gate's binding: spec.gracefulEvictionTasks: %v", err)
	}
	var from []string
	for _, it := range tasks {
		task, _ := it.(map[string]any)
		if g, ok := task["gracePeriodSeconds"].(int64); ok && time.Duration(g)*time.Second <= holdWindow {
			t.Fatalf("gate's eviction task %v has a grace period of %d s; the test needs more than %v", task, g, holdWindow)
		}
		s, _ := task["fromCluster"].(string)
		from = append(from, s)
	}
	return from
}

// waitGateHealth polls gate's binding until the health reported for
// cluster is one of want.
func waitGateHealth(t *testing.T, f *fixture, cluster string, want ...string) {
	t.Helper()
	poll(t, memberWait, fmt.Sprintf("hub: gate's binding: %s health %s", cluster, strings.Join(want, " or ")), func() (bool, string) {
		bnd, err := f.admin.get(context.Background(), gateBinding)
		if err != nil {
			return false, err.Error()
		}
		items, _, _ := unstructured.NestedSlice(bnd.Object, "status", "aggregatedStatus")
		for _, it := range items {
			if m, _ := it.(map[string]any); m["clusterName"] == cluster {
				h, _ := m["health"].(string)
				return slices.Contains(want, h), fmt.Sprint(m)
			}
		}
		return false, fmt.Sprint("no item in ", items)
	})
}

// tetherctl runs tetherctl in-process as the fixture's admin (ctlOut),
// failing the test on a non-zero exit.
func tetherctl(t *testing.T, f *fixture, args ...string) {
	t.Helper()
	ctlOut(t, f, args...)
}

// gatePlaced waits until gate has its one replica ready on one of the
// fixture's two clusters, and returns that cluster, a, and the other, b.
func gatePlaced(t *testing.T, f *fixture) (a, b *kit.Cluster) {
	t.Helper()
	ctx := ctxFor(t)
	gate := ref("apps/v1", "Deployment", "gate")
	var from string
	poll(t, memberWait, "hub: gate placed on one cluster", func() (bool, string) {
		p, err := f.admin.placement(ctx, gate)
		if err != nil {
			return false, err.Error()
		}
		for c, n := range p {
			from = c
			return len(p) == 1 && n == 1, fmt.Sprint(p)
		}
		return false, "no placement"
	})
	a, b = f.env.Clusters[0], f.env.Clusters[1]
	if from == b.Name {
		a, b = b, a
	}
	waitDeployment(t, a, "gate", "1 ready replica", deploymentIs(1, "nginx:1.27", 1))
	return a, b
}
