package clientapi_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
)

// wrongOrder holds objects before what they need: a Deployment and a
// ConfigMap in namespace x before Namespace x, a custom resource before
// its CRD, a template before the policy that propagates it.
const wrongOrder = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: x}
spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}
---
apiVersion: example.com/v1
kind: Gadget
metadata: {name: cog}
spec: {size: 1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web, namespace: x}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: x}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Gadget, plural: gadgets}
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: v1
kind: Namespace
metadata: {name: x}
`

// TestApplyWritesInDependencyOrder: a file in the wrong order applies, and
// every object is written after what it needs (a lower store revision):
// a watcher, the detector and the renderer see a Namespace before what it
// holds, a CRD before its custom resources, a policy before the template
// it propagates.
func TestApplyWritesInDependencyOrder(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	resp := c.apply(t, []byte(wrongOrder), false)
	want := []string{"Deployment x/web CREATED", "Gadget /cog CREATED", "ConfigMap x/web CREATED",
		"PropagationPolicy x/web CREATED", "CustomResourceDefinition /gadgets.example.com CREATED", "Namespace /x CREATED"}
	if diff := cmp.Diff(want, outcomes(resp)); diff != "" || !resp.GetCommitted() || resp.GetPartial() {
		t.Fatalf("Apply(wrong order) committed=%v partial=%v, outcomes (-want +got):\n%s", resp.GetCommitted(), resp.GetPartial(), diff)
	}
	rev := map[string]int64{}
	for _, r := range resp.GetResults() {
		rev[r.GetRef().GetKind()] = r.GetRevision()
	}
	for _, before := range []struct{ first, then string }{
		{"Namespace", "ConfigMap"},
		{"Namespace", "Deployment"},
		{"CustomResourceDefinition", "Gadget"},
		{"PropagationPolicy", "Deployment"},
		{"ConfigMap", "Deployment"},
	} {
		if rev[before.first] == 0 || rev[before.first] >= rev[before.then] {
			t.Errorf("revision of %s = %d, of %s = %d; want the %s written first", before.first, rev[before.first],
				before.then, rev[before.then], before.first)
		}
	}
}

// TestApplyRejectedInTheMiddleReportsEachObject: an invalid object among
// valid ones is reported with its field, every other object says what
// would have happened, and nothing is stored.
func TestApplyRejectedInTheMiddleReportsEachObject(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	in := "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n" +
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad, namespace: shop, labels: {\"-no\": x}}\nspec: {}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\n"
	resp := c.apply(t, []byte(in), false)
	want := []string{"Namespace /shop CREATED", "Deployment shop/bad REJECTED", "ConfigMap shop/c CREATED"}
	if diff := cmp.Diff(want, outcomes(resp)); diff != "" || resp.GetCommitted() || resp.GetPartial() {
		t.Fatalf("Apply(bad in the middle) committed=%v partial=%v, outcomes (-want +got):\n%s", resp.GetCommitted(), resp.GetPartial(), diff)
	}
	bad := resp.GetResults()[1]
	if len(bad.GetFieldErrors()) == 0 || bad.GetFieldErrors()[0].GetField() != "metadata.labels" {
		t.Errorf("Apply(bad in the middle) field errors = %v; want one naming metadata.labels", bad.GetFieldErrors())
	}
	for _, r := range resp.GetResults() {
		if r.GetRevision() != 0 {
			t.Errorf("result %v has revision %d; want 0: nothing was stored", r.GetRef(), r.GetRevision())
		}
	}
	if got := listNames(t, c, &hubv1.ListRequest{ApiVersion: "v1", Kind: "Namespace"}); len(got) != 0 {
		t.Errorf("Namespaces stored after a rejected Apply = %v; want none", got)
	}
}
