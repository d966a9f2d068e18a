package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/kit"
)

// rebalanceSample is how often the members' Deployments are read while a
// rebalance moves replicas.
const rebalanceSample = 200 * time.Millisecond

// rebalancerYAML is a Karmada WorkloadRebalancer of Deployment bal and of
// a workload that has no binding.
const rebalancerYAML = `apiVersion: apps.karmada.io/v1alpha1
kind: WorkloadRebalancer
metadata: {name: back-home}
spec:
  workloads:
  - {apiVersion: apps/v1, kind: Deployment, namespace: default, name: bal}
  - {apiVersion: apps/v1, kind: Deployment, namespace: default, name: ghost}
  ttlSecondsAfterFinished: 15
---
`

var balBinding = &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "bal-deployment"}

var rebalancerRef = &hubv1.ObjectRef{ApiVersion: "apps.karmada.io/v1alpha1", Kind: "WorkloadRebalancer", Name: "back-home"}

// healthyOnYAML labels bal ready-by-rule=yes on the clusters given, so
// that the user's rule (gateRulesYAML) calls it Healthy there only.
func healthyOnYAML(clusters ...string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: bal-healthy, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: bal}]
  overrideRules:
  - targetCluster: {clusterNames: [%s]}
    overriders:
      labelsOverrider: [{operator: add, value: {%s: "yes"}}]
---
`, strings.Join(clusters, ", "), readyByRule)
}

// TestWorkloadRebalancerAfterFailover is issue point 5 against real
// processes (a hub, two agents, two kit members): Deployment bal (4
// replicas, static weights 1:1) runs 2 and 2 on A and B; A is drained,
// bal fails over to B (4 there, A's copy deleted once they are Healthy);
// A comes back, and nothing moves until a WorkloadRebalancer asks for a
// fresh schedule: then 2 go back to A. The user's health rule calls A's
// new copies Unhealthy (the label it wants is on B's only) although their
// replicas are ready: for holdWindow B keeps its 4. Once A's copies are
// Healthy too, B scales down to 2. Sampling both members' Deployments
// every 200 ms throughout shows the ready total never below the 4 there
// were, B's copy never deleted, and B scaled down only after A was
// Healthy. The rebalancer's status says bal Successful and ghost Failed
// (ReferencedBindingNotFound), and it is deleted after its TTL. A field
// Karmada's kind lacks is refused at apply, named.
func TestWorkloadRebalancerAfterFailover(t *testing.T) {
	f := newFixture(t, 2)
	ctx := ctxFor(t)
	a, b := f.env.Clusters[0], f.env.Clusters[1]
	refuseUnknownField(t, f)
	f.admin.apply(ctx, gateRulesYAML+healthyOnYAML(b.Name)+deploymentYAML("bal", "nginx:1.27", 4)+
		weightedPolicyYAML("bal", "apps/v1", "Deployment", "bal", a.Name, 1, b.Name, 1))
	waitDeployment(t, a, "bal", "2 ready replicas", deploymentIs(2, "nginx:1.27", 2))
	waitDeployment(t, b, "bal", "2 ready replicas", deploymentIs(2, "nginx:1.27", 2))

	tetherctl(t, f, "taint", a.Name, "tether.io/drain=true:NoExecute")
	waitDeployment(t, b, "bal", "4 ready replicas (failed over)", deploymentIs(4, "nginx:1.27", 4))
	waitGone(t, a, "bal", "the failed-over copy deleted once B's copy is Healthy")
	tetherctl(t, f, "taint", a.Name, "tether.io/drain:NoExecute-")
	waitPlacement(t, f, "bal", map[string]int32{b.Name: 4}) // a Divided binding is not rebalanced by a cluster's return

	s := startSampler(a, b, "bal")
	f.admin.apply(ctx, rebalancerYAML)
	waitRebalancerStatus(t, f)
	tetherctl(t, f, "get", "workloadrebalancers", "back-home", "-o", "yaml") // the kind table knows it
	waitDeployment(t, a, "bal", "2 ready replicas (back)", deploymentIs(2, "nginx:1.27", 2))
	poll(t, memberWait, "hub: bal's binding: "+a.Name+" health Unhealthy (the user's rule)", func() (bool, string) {
		item, err := bindingItem(f, balBinding, a.Name)
		if err != nil {
			return false, err.Error()
		}
		return item["health"] == "Unhealthy", fmt.Sprint(item)
	})
	deadline := time.Now().Add(holdWindow)
	for time.Now().Before(deadline) {
		d, err := b.Clientset().AppsV1().Deployments("default").Get(ctx, "bal", metav1.GetOptions{})
		if err != nil || ptrValue(d.Spec.Replicas) != 4 || d.Status.ReadyReplicas != 4 {
			t.Fatalf("%s: bal while the user's rule calls %s's new copies Unhealthy: %v, err %v; want 4 replicas, 4 ready (kept until they are Healthy)",
				b.Name, a.Name, deploymentSummary(d), err)
		}
		time.Sleep(time.Second)
	}
	healed := time.Now()
	f.admin.apply(ctx, healthyOnYAML(a.Name, b.Name))
	waitDeployment(t, b, "bal", "scaled back to 2 once A's copies are Healthy", deploymentIs(2, "nginx:1.27", 2))
	waitPlacement(t, f, "bal", map[string]int32{a.Name: 2, b.Name: 2})
	r := s.stop()
	t.Logf("rebalance: %d samples every %v, ready total min %d (before: 4), %s first below 4 replicas %v after A's copies were made Healthy, with %d ready on %s",
		r.samples, rebalanceSample, r.minReady, b.Name, r.shrankAt.Sub(healed).Round(time.Millisecond), r.readyOnAWhenBShrank, a.Name)
	if r.failure != "" || r.samples < int(holdWindow/rebalanceSample)/2 || r.minReady < 4 || r.shrankAt.Before(healed) || r.readyOnAWhenBShrank < 2 {
		t.Errorf("during the rebalance: %d samples, ready total min %d (want ≥ 4), %s shrank at %v (A made Healthy at %v) with %d ready on %s (want 2); %s",
			r.samples, r.minReady, b.Name, r.shrankAt, healed, r.readyOnAWhenBShrank, a.Name, r.failure)
	}

	poll(t, memberWait, "hub: the rebalancer deleted after its TTL (15 s)", func() (bool, string) {
		_, err := f.admin.get(ctx, rebalancerRef)
		return status.Code(err) == codes.NotFound, fmt.Sprint(err)
	})
}

// refuseUnknownField: a field Karmada's WorkloadRebalancer does not
// have is refused at apply, named.
func refuseUnknownField(t *testing.T, f *fixture) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxFor(t), rpcTimeout)
	defer cancel()
	doc := strings.Replace(rebalancerYAML, "ttlSecondsAfterFinished: 15", "ttlSecondsAfterFinished: 15\n  paused: true", 1)
	resp, err := f.admin.objects.Apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(doc)})
	if err == nil && resp.GetCommitted() {
		t.Fatalf("Apply(rebalancer with spec.paused) committed; want it refused")
	}
	if msg := fmt.Sprint(err, resp.GetResults()); !strings.Contains(msg, "spec.paused") {
		t.Errorf("Apply(rebalancer with spec.paused) = %s; want the field named", msg)
	}
}

// waitGone polls until the Deployment default/name of c is not found.
func waitGone(t *testing.T, c *kit.Cluster, name, what string) {
	t.Helper()
	poll(t, memberWait, fmt.Sprintf("%s: deployment %s: %s", c.Name, name, what), func() (bool, string) {
		_, err := c.Clientset().AppsV1().Deployments("default").Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint("still there: ", err)
	})
}

// waitPlacement polls the template default/name's placement until it is
// want.
func waitPlacement(t *testing.T, f *fixture, name string, want map[string]int32) {
	t.Helper()
	poll(t, memberWait, fmt.Sprintf("hub: %s placed %v", name, want), func() (bool, string) {
		p, err := f.admin.placement(context.Background(), ref("apps/v1", "Deployment", name))
		if err != nil {
			return false, err.Error()
		}
		return fmt.Sprint(p) == fmt.Sprint(want), fmt.Sprint(p)
	})
}

// waitRebalancerStatus polls the rebalancer until its status says bal
// Successful and ghost Failed with ReferencedBindingNotFound, finished.
func waitRebalancerStatus(t *testing.T, f *fixture) {
	t.Helper()
	want := "[apps/v1 Deployment default/bal Successful ; apps/v1 Deployment default/ghost Failed ReferencedBindingNotFound] finished"
	poll(t, memberWait, "hub: the rebalancer's status", func() (bool, string) {
		r, err := f.admin.get(context.Background(), rebalancerRef)
		if err != nil {
			return false, err.Error()
		}
		items, _, _ := unstructured.NestedSlice(r.Object, "status", "observedWorkloads")
		var got []string
		for _, it := range items {
			m, _ := it.(map[string]any)
			w, _ := m["workload"].(map[string]any)
			got = append(got, fmt.Sprintf("%v %v %v/%v %v %v", w["apiVersion"], w["kind"], w["namespace"], w["name"], m["result"], nonNil(m["reason"])))
		}
		s := "[" + strings.Join(got, "; ") + "]"
		if ft, _, _ := unstructured.NestedString(r.Object, "status", "finishTime"); ft != "" {
			s += " finished"
		}
		return s == want, s
	})
}

func nonNil(v any) any {
	if v == nil {
		return ""
	}
	return v
}

// sampler reads the Deployment of both members every rebalanceSample.
type sampler struct {
	cancel context.CancelFunc
	done   chan samples
}

// samples is what a sampler saw.
type samples struct {
	samples  int
	minReady int32
	// shrankAt is the first sample with B below 4 replicas, and
	// readyOnAWhenBShrank A's ready replicas then (-1: not seen).
	shrankAt            time.Time
	readyOnAWhenBShrank int32
	// failure names a read that failed or a copy of B that was gone.
	failure string
}

// startSampler samples the Deployment name of a and b until stop, and
// once more then.
func startSampler(a, b *kit.Cluster, name string) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{cancel: cancel, done: make(chan samples, 1)}
	go func() {
		r := samples{minReady: 1 << 30, readyOnAWhenBShrank: -1}
		tick := time.NewTicker(rebalanceSample)
		defer tick.Stop()
		for {
			r.sample(ctx, a, b, name)
			select {
			case <-ctx.Done():
				r.sample(context.Background(), a, b, name) // the state stop was called in
				s.done <- r
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (r *samples) sample(ctx context.Context, a, b *kit.Cluster, name string) {
	da, errA := a.Clientset().AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
	db, errB := b.Clientset().AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
	if ctx.Err() != nil {
		return
	}
	if errB != nil || (errA != nil && !apierrors.IsNotFound(errA)) {
		r.failure += fmt.Sprintf("sample %d: %s: %v, %s: %v; ", r.samples, b.Name, errB, a.Name, errA)
		return
	}
	r.samples++
	var readyA int32
	if errA == nil {
		readyA = da.Status.ReadyReplicas
	}
	r.minReady = min(r.minReady, readyA+db.Status.ReadyReplicas)
	if ptrValue(db.Spec.Replicas) < 4 && r.readyOnAWhenBShrank < 0 {
		r.shrankAt, r.readyOnAWhenBShrank = time.Now(), readyA
	}
}

// stop ends the sampling and returns what it saw.
func (s *sampler) stop() samples {
	s.cancel()
	return <-s.done
}

// deploymentSummary is a Deployment's replicas and ready replicas.
func deploymentSummary(d *appsv1.Deployment) string {
	if d == nil {
		return "none"
	}
	return fmt.Sprintf("replicas %d, ready %d", ptrValue(d.Spec.Replicas), d.Status.ReadyReplicas)
}
