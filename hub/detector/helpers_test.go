package detector

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// tmpl builds a template "apiVersion/Kind ns/name" with labels, at
// revision rev. A name without "/" is cluster-scoped.
func tmpl(apiVersion, kind, nsName string, rev int64, labels map[string]string) *bind.Template {
	ns, name, ok := strings.Cut(nsName, "/")
	if !ok {
		ns, name = "", nsName
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(kind)
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetLabels(labels)
	gv, _ := schema.ParseGroupVersion(apiVersion)
	ref := store.ObjectRef{Group: gv.Group, Kind: kind, Namespace: ns, Name: name}
	return &bind.Template{Ref: ref, Obj: obj, Revision: rev}
}

func deploy(nsName string, labels map[string]string) *bind.Template {
	return tmpl("apps/v1", "Deployment", nsName, 10, labels)
}

// pol builds a policy: "ns/name" is a PropagationPolicy, "name" a
// ClusterPropagationPolicy. Options tune its spec.
func pol(nsName string, prio int32, sels []policyv1alpha1.ResourceSelector, opts ...func(*bind.Policy)) *bind.Policy {
	ns, name, ok := strings.Cut(nsName, "/")
	ref := bind.PolicyRef{Namespace: ns, Name: name}
	if !ok {
		ref = bind.PolicyRef{Cluster: true, Name: nsName}
	}
	p := &bind.Policy{Ref: ref, ID: "id-" + nsName, Revision: 5}
	p.Spec.Priority = &prio
	p.Spec.ResourceSelectors = sels
	for _, o := range opts {
		o(p)
	}
	return p
}

func always(p *bind.Policy)   { p.Spec.Preemption = policyv1alpha1.PreemptAlways }
func lazy(p *bind.Policy)     { p.Spec.ActivationPreference = policyv1alpha1.LazyActivation }
func deleting(p *bind.Policy) { p.Deleting = true }

func selAll(apiVersion, kind string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind}
}

func selName(apiVersion, kind, ns, name string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}
}

func selLabels(apiVersion, kind string, labels map[string]string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind,
		LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}
}

func deploys(sels ...policyv1alpha1.ResourceSelector) []policyv1alpha1.ResourceSelector { return sels }

func name(p *bind.Policy) string {
	if p == nil {
		return "<nil>"
	}
	return p.Ref.String()
}

// mustJSON marshals v or fails the test.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return data
}
