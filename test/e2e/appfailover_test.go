package e2e

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// appFailoverYAML is the Deployment gate (one replica) divided, aggregated,
// over clusters, with application failover after 5 s Unhealthy, purge mode
// Gracefully; an OverridePolicy labels gate ready-by-rule=yes on healthyOn
// only, so that the user's rule (gateRulesYAML) calls it Healthy there and
// Unhealthy everywhere else. Without healthyOn: neither failover nor
// override.
func appFailoverYAML(clusters []string, healthyOn string) string {
	policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: gate, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: gate}]
  propagateDeps: true
  placement:
    clusterAffinity: {clusterNames: [%s, %s]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
---
`, clusters[0], clusters[1])
	if healthyOn == "" {
		return deploymentYAML("gate", "nginx:1.27", 1) + policy
	}
	return deploymentYAML("gate", "nginx:1.27", 1) + fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: gate, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: gate}]
  propagateDeps: true
  placement:
    clusterAffinity: {clusterNames: [%s, %s]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 5}
      purgeMode: Gracefully
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: gate-ready, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: gate}]
  overrideRules:
  - targetCluster: {clusterNames: [%s]}
    overriders:
      labelsOverrider: [{operator: add, value: {%s: "yes"}}]
---
`, clusters[0], clusters[1], healthyOn, readyByRule)
}

// TestApplicationFailoverMovesUnhealthyWorkload is issue 13's "an
// application failover moves a workload whose health stays Unhealthy past
// the toleration" against real processes (a hub, two agents, two kit
// members): gate runs on member A, where the user's health rule calls it
// Unhealthy (the label the rule wants is set on B only); after the 5 s
// toleration the hub evicts A with an ApplicationFailure task and gate
// moves to B; once B reports it Healthy the task ends and A's agent
// deletes A's copy.
func TestApplicationFailoverMovesUnhealthyWorkload(t *testing.T) {
	f := newFixture(t, 2)
	ctx := ctxFor(t)
	names := []string{f.env.Clusters[0].Name, f.env.Clusters[1].Name}
	f.admin.apply(ctx, gateRulesYAML)
	// Place gate first without failover: it goes to one cluster, A; then
	// ask for application failover and make the other one, B, the one
	// where the rule calls it Healthy.
	f.admin.apply(ctx, appFailoverYAML(names, ""))
	a, b := gatePlaced(t, f)
	gate := ref("apps/v1", "Deployment", "gate")
	waitGateHealth(t, f, a.Name, "Unhealthy")
	f.admin.apply(ctx, appFailoverYAML(names, b.Name))

	poll(t, memberWait, "hub: gate evicted from "+a.Name+" for ApplicationFailure", func() (bool, string) {
		bnd, err := f.admin.get(context.Background(), gateBinding)
		if err != nil {
			return false, err.Error()
		}
		tasks, _, _ := unstructured.NestedSlice(bnd.Object, "spec", "gracefulEvictionTasks")
		clusters, _, _ := unstructured.NestedSlice(bnd.Object, "spec", "clusters")
		for _, it := range tasks {
			if m, _ := it.(map[string]any); m["fromCluster"] == a.Name && m["reason"] == "ApplicationFailure" {
				return true, ""
			}
		}
		p, _ := f.admin.placement(ctx, gate)
		if _, onA := p[a.Name]; !onA && len(tasks) == 0 {
			return true, "" // already over: checked below
		}
		return false, fmt.Sprint("clusters ", clusters, " tasks ", tasks)
	})
	waitDeployment(t, b, "gate", "1 ready replica (the replacement)", deploymentIs(1, "nginx:1.27", 1))
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
	p, err := f.admin.placement(ctx, gate)
	if err != nil || len(p) != 1 || p[b.Name] != 1 {
		t.Errorf("gate's placement = %v (%v); want 1 replica on %s", p, err, b.Name)
	}
}
