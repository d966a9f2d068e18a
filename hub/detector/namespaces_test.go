package detector

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

var (
	shopNS  = namespaceRef("shop")
	storeNS = namespaceRef("store")
)

func nsJSON(name string, labels map[string]string) string {
	meta := map[string]any{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	data, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
	return string(data)
}

// waitAuto waits until ref's binding is auto-propagated: no claim, every
// cluster whatever its taints.
func (e *env) waitAuto(ref store.ObjectRef) *workv1alpha1.ResourceBinding {
	e.t.Helper()
	var b *workv1alpha1.ResourceBinding
	e.waitFor("binding of "+refString(ref)+" auto-propagated", func() bool {
		var ok bool
		b, _, ok = e.binding(ref)
		return ok && bind.AutoPropagatedOf(b) && bind.ClaimOf(b) == nil
	})
	p := b.Spec.Placement
	if p == nil || p.ClusterAffinity != nil || len(p.ClusterAffinities) > 0 ||
		!slices.Equal(p.ClusterTolerations, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}) ||
		p.ReplicaSchedulingType() != policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		e.t.Errorf("placement of auto-propagated %s = %+v; want every cluster, every taint tolerated, Duplicated", refString(ref), p)
	}
	if b.Spec.ConflictResolution != policyv1alpha1.ConflictAbort || b.Spec.Resource.Kind != "Namespace" {
		e.t.Errorf("binding of %s: conflictResolution %q, resource %+v; want Abort and the Namespace", refString(ref), b.Spec.ConflictResolution, b.Spec.Resource)
	}
	return b
}

// stored returns the template stored at ref, nil when there is none.
func (e *env) stored(ref store.ObjectRef) map[string]any {
	e.t.Helper()
	kv, err := e.st.Get(e.ctx, store.ObjectKey(ref))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		e.t.Fatalf("get %s: %v", refString(ref), err)
	}
	obj := map[string]any{}
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		e.t.Fatalf("decode %s: %v", refString(ref), err)
	}
	return obj
}

// TestNamespaceAutoPropagation: a Namespace on the hub is bound to every
// cluster with no policy, except skipped, reserved, default and opted-out
// ones; a ClusterPropagationPolicy that matches it wins, and deleting it
// gives the Namespace back to auto-propagation.
func TestNamespaceAutoPropagation(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.put(nsJSON("shop", nil))
	e.waitAuto(shopNS)

	skipped := []store.ObjectRef{namespaceRef("kube-extra"), namespaceRef("default"), namespaceRef("private"), namespaceRef("karmada-system")}
	e.put(nsJSON("kube-extra", nil))
	e.put(nsJSON("default", nil))
	e.put(nsJSON("karmada-system", nil))
	e.put(nsJSON("private", map[string]string{"namespace.karmada.io/skip-auto-propagation": "true"}))
	e.probe("prod", 1)
	for _, ref := range skipped {
		if b, _, ok := e.binding(ref); ok {
			t.Errorf("%s has binding %+v; want none (skipped, reserved, default or opted out)", refString(ref), b.Spec)
		}
	}

	e.put(ppObj("", "shop-ns", 0, deploys(selName("v1", "Namespace", "", "shop"))))
	b := e.waitClaim(shopNS, &bind.PolicyRef{Cluster: true, Name: "shop-ns"})
	if bind.AutoPropagatedOf(b) {
		t.Errorf("binding of %s claimed by a ClusterPropagationPolicy still marked auto-propagated: %v", refString(shopNS), b.Labels)
	}
	e.del(store.ObjectRef{Group: policyv1alpha1.GroupName, Kind: policyv1alpha1.KindClusterPropagationPolicy, Name: "shop-ns"})
	e.waitAuto(shopNS)
}

// TestNamespaceOptOutKeepsClusters: labelling an auto-propagated Namespace
// with the opt-out label keeps it on the clusters it is on (pinned there,
// never removed) and sends it to no other; removing the label gives it
// back to every cluster.
func TestNamespaceOptOutKeepsClusters(t *testing.T) {
	e := newEnv(t)
	e.start()
	e.put(nsJSON("shop", nil))
	e.waitAuto(shopNS)
	e.schedule(shopNS, "edge-1", "edge-2")

	e.put(nsJSON("shop", map[string]string{"namespace.karmada.io/skip-auto-propagation": "true"}))
	var b *workv1alpha1.ResourceBinding
	e.waitFor("opted-out namespace pinned to its clusters", func() bool {
		var ok bool
		b, _, ok = e.binding(shopNS)
		return ok && !bind.AutoPropagatedOf(b)
	})
	p := b.Spec.Placement
	if p == nil || p.ClusterAffinity == nil || !slices.Equal(p.ClusterAffinity.ClusterNames, []string{"edge-1", "edge-2"}) {
		t.Errorf("placement of opted-out %s = %+v; want clusterNames [edge-1 edge-2]", refString(shopNS), p)
	}
	if len(b.Spec.Clusters) != 2 {
		t.Errorf("clusters of opted-out %s = %v; want both kept", refString(shopNS), b.Spec.Clusters)
	}

	e.put(nsJSON("shop", nil))
	e.waitAuto(shopNS)
}

// TestNamespaceCreatedForTemplates: a template in a namespace the hub has
// no Namespace for gets one, created on the hub and auto-propagated, so
// that the template finds it in every member with no extra policy; no
// Namespace is created for default or skipped namespaces, nor with
// auto-propagation off.
func TestNamespaceCreatedForTemplates(t *testing.T) {
	e := newEnv(t)
	stop := e.start()
	e.put(deployJSON("store", "web", 2, `{"app":"web"}`))
	e.put(ppObj("store", "web", 0, deploys(selAll("apps/v1", "Deployment"))))
	e.waitClaim(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "store", Name: "web"}, ppRef("store", "web"))
	e.waitAuto(storeNS)
	ns := e.stored(storeNS)
	if meta, _ := ns["metadata"].(map[string]any); meta["uid"] == nil || fmt.Sprint(meta["labels"]) != fmt.Sprintf("map[%s:true]", LabelAutoCreated) {
		t.Errorf("Namespace created on the hub = %v; want a uid and label %s", ns, LabelAutoCreated)
	}

	e.put(deployJSON("kube-extra", "web", 1, `{"app":"web"}`))
	e.put(deployJSON("default", "web", 1, `{"app":"web"}`))
	e.probe("prod", 1)
	stop()

	e.start(WithNamespacePropagation(false))
	e.put(deployJSON("later", "web", 1, `{"app":"web"}`))
	e.probe("prod", 2)
	for _, n := range []string{"kube-extra", "default", "later"} {
		if obj := e.stored(namespaceRef(n)); obj != nil {
			t.Errorf("Namespace %s created on the hub: %v; want none", n, obj)
		}
	}
}
