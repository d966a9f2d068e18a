package detector

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

var (
	webRef    = store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}
	widgetRef = store.ObjectRef{Group: "example.io", Kind: "Widget", Namespace: "prod", Name: "w"}
)

func ppRef(ns, name string) *bind.PolicyRef { return &bind.PolicyRef{Namespace: ns, Name: name} }

func TestBindOnPolicyArrival(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.put(deployJSON("prod", "web", 3, `{"app":"web"}`))
	e.put(`{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"prod"},"spec":{"replicas":7}}`)
	e.probe("prod", 1)
	if _, _, ok := e.binding(webRef); ok {
		t.Fatalf("binding of %s exists before any policy; want it waiting", refString(webRef))
	}

	pp := ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment"), selAll("example.io/v1", "Widget")))
	pp.APIVersion = policyv1alpha1.KarmadaGroupVersion.String() // Karmada's group is an alias
	e.put(pp)
	b := e.waitClaim(webRef, ppRef("prod", "pp"))
	cpu := resource.MustParse("100m")
	if b.Spec.Replicas != 3 || b.Spec.ReplicaRequirements == nil || b.Spec.ReplicaRequirements.ResourceRequest.Cpu().Cmp(cpu) != 0 {
		t.Errorf("binding spec = %+v; want 3 replicas of 100m CPU from the interpreter", b.Spec)
	}
	if b.Spec.Placement == nil || b.Spec.SchedulerName != policyv1alpha1.DefaultSchedulerName ||
		b.Spec.ConflictResolution != policyv1alpha1.ConflictAbort || b.Spec.Resource.Name != "web" ||
		b.Spec.Resource.ResourceVersion == "" {
		t.Errorf("binding spec = %+v; want the policy's defaulted placement and behaviour and the template reference", b.Spec)
	}
	w := e.waitClaim(widgetRef, ppRef("prod", "pp"))
	if w.Spec.Replicas != 0 || w.Spec.ReplicaRequirements != nil {
		t.Errorf("Widget binding replicas = %d, %+v; want a non-replicated binding", w.Spec.Replicas, w.Spec.ReplicaRequirements)
	}

	e.del(widgetRef)
	e.waitGone(widgetRef)
	e.del(store.ObjectRef{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.KindPropagationPolicy, Namespace: "prod", Name: "pp"})
	e.waitReleased(webRef)
}

func TestHigherPriorityDoesNotSteal(t *testing.T) {
	for _, preemption := range []bool{false, true} {
		name := map[bool]string{false: "preemption disabled", true: "preemption enabled"}[preemption]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.start(WithPreemption(preemption))
			e.put(deployJSON("prod", "web", 1, `{"app":"web"}`))
			e.put(ppObj("prod", "low", 0, deploys(selAll("apps/v1", "Deployment"))))
			e.waitClaim(webRef, ppRef("prod", "low"))

			e.put(ppObj("prod", "high", 10, deploys(selName("apps/v1", "Deployment", "prod", "web"))))
			e.probe("prod", 1)
			if c := e.claim(webRef); c == nil || c.Policy != *ppRef("prod", "low") {
				t.Errorf("claim after a higher-priority policy = %+v; want prod/low kept", c)
			}

			always := ppObj("prod", "high", 10, deploys(selName("apps/v1", "Deployment", "prod", "web")))
			always.Spec.Preemption = policyv1alpha1.PreemptAlways
			e.put(always)
			if preemption {
				e.waitClaim(webRef, ppRef("prod", "high"))
				return
			}
			e.probe("prod", 2)
			if c := e.claim(webRef); c == nil || c.Policy != *ppRef("prod", "low") {
				t.Errorf("claim with preemption disabled = %+v; want prod/low kept", c)
			}
		})
	}
}

func TestPropagationPolicyBeatsClusterPolicy(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.put(ppObj("", "cpp", 100, deploys(selAll("apps/v1", "Deployment"),
		selAll("rbac.authorization.k8s.io/v1", "ClusterRole"))))
	e.put(deployJSON("prod", "web", 2, `{"app":"web"}`))
	e.waitClaim(webRef, &bind.PolicyRef{Cluster: true, Name: "cpp"})

	e.put(ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment"))))
	e.probe("prod", 1)
	if c := e.claim(webRef); c == nil || !c.Policy.Cluster {
		t.Errorf("claim after a PropagationPolicy arrived = %+v; want the ClusterPropagationPolicy kept (no preemption)", c)
	}
	e.put(deployJSON("prod", "api", 2, `{"app":"api"}`))
	apiRef := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "api"}
	e.waitClaim(apiRef, ppRef("prod", "pp"))

	roleRef := e.put(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"system:viewer"}}`)
	b := e.waitClaim(roleRef, &bind.PolicyRef{Cluster: true, Name: "cpp"})
	if b.Kind != workv1alpha1.KindClusterResourceBinding || b.Name != "system.viewer-clusterrole" || b.Namespace != "" {
		t.Errorf("binding of a cluster-scoped template = %s %s/%s; want ClusterResourceBinding system.viewer-clusterrole",
			b.Kind, b.Namespace, b.Name)
	}
}

// TestPolicyDeletionKeepsBinding: deleting the claiming policy moves the
// template to the next matching one; deleting the last one keeps the
// binding, its placement and the scheduler's clusters, without a claim
// (Karmada v1.18: the binding stays, so the works and member objects do),
// and a new matching policy takes it over. Before, the binding was deleted
// and every member object with it.
func TestPolicyDeletionKeepsBinding(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.put(deployJSON("prod", "web", 1, `{"app":"web"}`))
	a := e.put(ppObj("prod", "a", 5, deploys(selAll("apps/v1", "Deployment"))))
	b := e.put(ppObj("prod", "b", 1, deploys(selAll("apps/v1", "Deployment"))))
	e.waitClaim(webRef, ppRef("prod", "a"))
	e.schedule(webRef, "m1")

	e.del(a)
	e.waitClaim(webRef, ppRef("prod", "b"))
	e.del(b)
	released := e.waitReleased(webRef)
	if len(released.Spec.Clusters) != 1 || released.Spec.Clusters[0].Name != "m1" {
		t.Errorf("clusters of the released binding = %+v; want m1 kept", released.Spec.Clusters)
	}
	e.put(ppObj("prod", "b", 1, deploys(selAll("apps/v1", "Deployment"))))
	taken := e.waitClaim(webRef, ppRef("prod", "b"))
	if len(taken.Spec.Clusters) != 1 || taken.Spec.Clusters[0].Name != "m1" {
		t.Errorf("clusters after a new policy took the binding = %+v; want m1 kept until the scheduler decides", taken.Spec.Clusters)
	}

	// A template in a skipped namespace is never bound.
	e.put(deployJSON("kube-system", "dns", 1, `{}`))
	e.put(ppObj("kube-system", "all", 0, deploys(selAll("apps/v1", "Deployment"))))
	e.probe("prod", 1)
	if _, _, ok := e.binding(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "kube-system", Name: "dns"}); ok {
		t.Errorf("a template in kube-system was bound")
	}
}

func TestTemplateDeletionUnbinds(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.put(ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment"))))
	e.put(deployJSON("prod", "web", 1, `{"app":"web"}`))
	e.waitClaim(webRef, ppRef("prod", "pp"))
	e.del(webRef)
	e.waitGone(webRef)
}

func TestTemplateNoLongerMatches(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.put(ppObj("prod", "pp", 0, deploys(selLabels("apps/v1", "Deployment", map[string]string{"app": "web"}))))
	e.put(deployJSON("prod", "web", 1, `{"app":"web"}`))
	e.waitClaim(webRef, ppRef("prod", "pp"))
	_, rev, _ := e.binding(webRef)

	// Spec §2.2: the claim stays and the binding is left as it is.
	e.put(deployJSON("prod", "web", 5, `{"app":"other"}`))
	e.probe("prod", 1)
	b, rev2, ok := e.binding(webRef)
	if !ok || rev2 != rev || b.Spec.Replicas != 1 {
		t.Errorf("binding after the labels changed: exists %v, revision %d (was %d), replicas %d; want it untouched", ok, rev2, rev, b.Spec.Replicas)
	}
	// Spec §2.3: a change of the policy releases the template; nothing else
	// matches, so the binding stays without a claim (as Karmada's).
	e.put(ppObj("prod", "pp", 1, deploys(selLabels("apps/v1", "Deployment", map[string]string{"app": "web"}))))
	e.waitReleased(webRef)
	// Deleting the template is what removes the binding.
	e.del(webRef)
	e.waitGone(webRef)
}

func TestPropagateDeps(t *testing.T) {
	e := newEnv(t)
	e.start()
	cmRef := e.put(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-config","namespace":"prod"}}`)
	secretRef := e.put(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"web-secret","namespace":"prod"}}`)
	pp := ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment")))
	pp.Spec.PropagateDeps = true
	e.put(pp)
	e.put(deploymentJSON)
	parent := e.waitClaim(webRef, ppRef("prod", "pp"))
	for _, dep := range []store.ObjectRef{cmRef, secretRef} {
		e.waitFor("attached binding of "+refString(dep), func() bool {
			b, _, ok := e.binding(dep)
			return ok && bind.ClaimOf(b) == nil && len(b.Spec.RequiredBy) == 1 &&
				b.Spec.RequiredBy[0].Name == "web-deployment" && b.Spec.Placement == nil
		})
	}

	// The scheduler places the parent; the dependencies follow.
	parent.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 3}}
	_, rev, _ := e.binding(webRef)
	if _, err := e.st.Update(e.ctx, store.BindingKey(webRef), mustJSON(t, parent), rev); err != nil {
		t.Fatalf("scheduler update: %v", err)
	}
	e.waitFor("requiredBy clusters of the ConfigMap", func() bool {
		b, _, ok := e.binding(cmRef)
		return ok && len(b.Spec.RequiredBy) == 1 && len(b.Spec.RequiredBy[0].Clusters) == 1 &&
			b.Spec.RequiredBy[0].Clusters[0].Name == "m1"
	})

	// A failover moves the parent to m2 and keeps its copy on m1 under an
	// eviction task: the dependencies stay on m1 too.
	parent, rev, _ = e.binding(webRef)
	parent.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "m2", Replicas: 3}}
	parent.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "m1", Reason: "TaintUntolerated", Producer: "TaintManager"}}
	if _, err := e.st.Update(e.ctx, store.BindingKey(webRef), mustJSON(t, parent), rev); err != nil {
		t.Fatalf("scheduler failover update: %v", err)
	}
	e.waitFor("requiredBy clusters of the ConfigMap during the failover", func() bool {
		b, _, ok := e.binding(cmRef)
		return ok && len(b.Spec.RequiredBy) == 1 && len(b.Spec.RequiredBy[0].Clusters) == 2 &&
			b.Spec.RequiredBy[0].Clusters[0].Name == "m2" && b.Spec.RequiredBy[0].Clusters[1].Name == "m1"
	})

	// The detector's rewrites keep the scheduler's clusters.
	e.put(deployJSON("prod", "web", 4, `{"app":"web"}`))
	e.waitFor("replicas 4 with clusters kept", func() bool {
		b, _, _ := e.binding(webRef)
		return b != nil && b.Spec.Replicas == 4 && len(b.Spec.Clusters) == 1
	})
	// That Deployment has no dependencies any more.
	e.waitGone(cmRef)
	e.waitGone(secretRef)
}

func TestRestartWritesNothing(t *testing.T) {
	e := newEnv(t)
	stop := e.start()
	e.put(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-config","namespace":"prod"}}`)
	e.put(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"web-secret","namespace":"prod"}}`)
	pp := ppObj("prod", "pp", 0, deploys(selAll("apps/v1", "Deployment")))
	pp.Spec.PropagateDeps = true
	e.put(pp)
	lazyPP := ppObj("prod", "lazy", 0, deploys(selAll("example.io/v1", "Widget")))
	lazyPP.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	e.put(lazyPP)
	e.put(ppObj("", "cpp", 0, deploys(selAll("rbac.authorization.k8s.io/v1", "ClusterRole"))))
	e.put(deploymentJSON)
	e.put(`{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"prod"}}`)
	e.put(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"viewer"}}`)
	e.waitClaim(widgetRef, ppRef("prod", "lazy"))
	// Deployment, ConfigMap, Secret, Widget, ClusterRole, and the
	// Namespace prod the detector created on the hub and auto-propagates.
	e.waitFor("6 bindings", func() bool { return len(e.revisions()) == 6 })
	e.probe("prod", 1)
	before := e.revisions()
	stop()

	e.start()
	e.probe("prod", 2)
	after := e.revisions()
	for key, rev := range before {
		if after[key] != rev {
			t.Errorf("binding %s revision %d after restart; want %d (no write)", key, after[key], rev)
		}
	}
}

// claim is the current claim of ref's binding.
func (e *env) claim(ref store.ObjectRef) *bind.Claim {
	e.t.Helper()
	b, _, ok := e.binding(ref)
	if !ok {
		return nil
	}
	return bind.ClaimOf(b)
}

func TestLazyActivation(t *testing.T) {
	e := newEnv(t)
	e.start()
	placed := func(cluster string) *policyv1alpha1.PropagationPolicy {
		p := ppObj("prod", "lazy", 0, deploys(selAll("apps/v1", "Deployment")))
		p.Spec.ActivationPreference = policyv1alpha1.LazyActivation
		p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}}
		return p
	}
	e.put(deployJSON("prod", "old", 1, `{}`)) // written before the policy: waits
	e.put(placed("m1"))
	e.put(deployJSON("prod", "web", 1, `{"app":"web"}`))
	b := e.waitClaim(webRef, ppRef("prod", "lazy"))
	if got := b.Spec.Placement.ClusterAffinity.ClusterNames[0]; got != "m1" {
		t.Fatalf("placement = %s; want m1", got)
	}
	e.put(placed("m2"))
	e.probe("prod", 1)
	b, _, _ = e.binding(webRef)
	if got := b.Spec.Placement.ClusterAffinity.ClusterNames[0]; got != "m1" {
		t.Errorf("placement after a Lazy policy change = %s; want m1 until the template changes", got)
	}
	oldRef := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "old"}
	if _, _, ok := e.binding(oldRef); ok {
		t.Errorf("a template older than the Lazy policy was bound before it changed")
	}
	e.put(deployJSON("prod", "web", 2, `{"app":"web"}`))
	e.waitFor("placement m2 after the template changed", func() bool {
		b, _, _ := e.binding(webRef)
		return b.Spec.Placement.ClusterAffinity.ClusterNames[0] == "m2"
	})
	e.put(deployJSON("prod", "old", 2, `{}`))
	e.waitClaim(oldRef, ppRef("prod", "lazy"))
}
