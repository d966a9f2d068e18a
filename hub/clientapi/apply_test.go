package clientapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
)

func TestApplyCreateUnchangedConfigured(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	web := fixture(t, "web.yaml")

	resp := c.apply(t, web, false)
	want := []string{"Deployment default/web CREATED", "PropagationPolicy default/web CREATED", "OverridePolicy default/web-registry CREATED"}
	if diff := cmp.Diff(want, outcomes(resp)); diff != "" || !resp.GetCommitted() || resp.GetRevision() == 0 {
		t.Fatalf("Apply(web.yaml) committed=%v revision=%d outcomes (-want +got):\n%s", resp.GetCommitted(), resp.GetRevision(), diff)
	}
	first := getObject(t, c, &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"})
	meta := first["metadata"].(map[string]any)
	if meta["uid"] == "" || meta["creationTimestamp"] == nil || meta["generation"] != 1.0 ||
		meta["resourceVersion"] != fmt.Sprint(resp.GetResults()[0].GetRevision()) {
		t.Errorf("stored Deployment metadata = %v; want uid, creationTimestamp, generation 1 and resourceVersion %d", meta, resp.GetResults()[0].GetRevision())
	}

	resp = c.apply(t, web, false)
	want = []string{"Deployment default/web UNCHANGED", "PropagationPolicy default/web UNCHANGED", "OverridePolicy default/web-registry UNCHANGED"}
	if diff := cmp.Diff(want, outcomes(resp)); diff != "" {
		t.Errorf("re-Apply(web.yaml) outcomes (-want +got):\n%s", diff)
	}

	changed := strings.Replace(string(web), "replicas: 3", "replicas: 5", 1)
	resp = c.apply(t, []byte(changed), false)
	want = []string{"Deployment default/web CONFIGURED", "PropagationPolicy default/web UNCHANGED", "OverridePolicy default/web-registry UNCHANGED"}
	if diff := cmp.Diff(want, outcomes(resp)); diff != "" {
		t.Errorf("Apply(replicas 5) outcomes (-want +got):\n%s", diff)
	}
	second := getObject(t, c, &hubv1.ObjectRef{Kind: "Deployment", Namespace: "default", Name: "web"})
	m2 := second["metadata"].(map[string]any)
	if m2["uid"] != meta["uid"] || m2["creationTimestamp"] != meta["creationTimestamp"] || m2["generation"] != 2.0 {
		t.Errorf("changed Deployment metadata = %v; want the same uid and creationTimestamp, generation 2", m2)
	}
}

// TestApplyKarmadaGroupIsCanonical: a Karmada-group policy is stored under
// Tether's group and found by either apiVersion.
func TestApplyKarmadaGroupIsCanonical(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	c.apply(t, fixture(t, "web.yaml"), false)
	for _, apiVersion := range []string{"policy.karmada.io/v1alpha1", "policy.tether.io/v1alpha1", ""} {
		obj := getObject(t, c, &hubv1.ObjectRef{ApiVersion: apiVersion, Kind: "OverridePolicy", Namespace: "default", Name: "web-registry"})
		if obj["apiVersion"] != "policy.tether.io/v1alpha1" {
			t.Errorf("Get(OverridePolicy, apiVersion %q) apiVersion = %v; want policy.tether.io/v1alpha1", apiVersion, obj["apiVersion"])
		}
	}
}

func TestApplyRejectsInvalidPolicyAndStoresNothing(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	resp := c.apply(t, fixture(t, "invalid-policy.yaml"), false)
	want := []string{"ConfigMap default/settings CREATED", "PropagationPolicy default/broken REJECTED"}
	if diff := cmp.Diff(want, outcomes(resp)); diff != "" || resp.GetCommitted() || resp.GetRevision() != 0 {
		t.Fatalf("Apply(invalid-policy.yaml) committed=%v revision=%d outcomes (-want +got):\n%s", resp.GetCommitted(), resp.GetRevision(), diff)
	}
	rejected := resp.GetResults()[1]
	if len(rejected.GetFieldErrors()) == 0 || rejected.GetFieldErrors()[0].GetField() != "spec.placement.replicaScheduling.replicaDivisionPreference" {
		t.Errorf("rejected policy field errors = %v; want spec.placement.replicaScheduling.replicaDivisionPreference", rejected.GetFieldErrors())
	}
	if !strings.Contains(rejected.GetMessage(), "replicaDivisionPreference") || len(rejected.GetObjectJson()) != 0 {
		t.Errorf("rejected policy message = %q, object %q; want the field named and no object", rejected.GetMessage(), rejected.GetObjectJson())
	}
	if resp.GetResults()[0].GetRevision() != 0 {
		t.Errorf("valid object of a rejected request has revision %d; want 0", resp.GetResults()[0].GetRevision())
	}
	_, err := c.objects.Get(ctx(t), &hubv1.GetRequest{Ref: &hubv1.ObjectRef{Kind: "ConfigMap", Namespace: "default", Name: "settings"}})
	if status.Code(err) != codes.NotFound {
		t.Errorf("Get(ConfigMap settings) after a rejected Apply = %v; want NotFound (all or nothing)", err)
	}
}

func TestApplyTemplateChecks(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	tests := []struct {
		name, manifest, field string
	}{
		{"no apiVersion", `{"kind": "ConfigMap", "metadata": {"name": "a"}}`, "apiVersion"},
		{"no kind", `{"apiVersion": "v1", "metadata": {"name": "a"}}`, "kind"},
		{"no name", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}`, "metadata.name"},
		{"namespace on a cluster-scoped kind", `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "namespace": "b"}}`, "metadata.namespace"},
		{"bad label", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"a b": "c"}}}`, "metadata.labels"},
		{"unknown policy field", "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p}\nspec: {resourceSelectorz: []}\n", "spec.resourceSelectorz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.apply(t, []byte(tt.manifest), false)
			r := resp.GetResults()[0]
			if r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED || len(r.GetFieldErrors()) == 0 || !strings.HasPrefix(r.GetFieldErrors()[0].GetField(), tt.field) {
				t.Errorf("Apply(%s) = %v %v; want REJECTED at %s", tt.name, r.GetOutcome(), r.GetFieldErrors(), tt.field)
			}
		})
	}
	if _, err := c.objects.Apply(ctx(t), &hubv1.ApplyRequest{Manifests: []byte("{not yaml: [")}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Apply(unparsable) = %v; want InvalidArgument", err)
	}
}

func TestApplyObjectTooLarge(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	big := fmt.Sprintf(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"blob": %q}}`, strings.Repeat("x", 1600*1024))
	resp := c.apply(t, []byte(big), false)
	r := resp.GetResults()[0]
	if r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED || resp.GetCommitted() ||
		!strings.Contains(r.GetMessage(), "the limit is 1572864 bytes (1.5 MiB)") || !strings.Contains(r.GetMessage(), "too large: 16") {
		t.Errorf("Apply(1.6 MiB ConfigMap) = %v, %q; want REJECTED naming its size and the 1.5 MiB limit", r.GetOutcome(), r.GetMessage())
	}
}

func TestApplyUnknownCustomResources(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	resp := c.apply(t, fixture(t, "widget.yaml"), false)
	want := []string{"Widget default/gizmo CREATED", "CustomResourceDefinition /gadgets.example.com CREATED", "Gadget /sprocket CREATED"}
	if diff := cmp.Diff(want, outcomes(resp)); diff != "" || !resp.GetCommitted() {
		t.Fatalf("Apply(widget.yaml) outcomes (-want +got):\n%s", diff)
	}
	got := getObject(t, c, &hubv1.ObjectRef{ApiVersion: "example.com/v1", Kind: "Widget", Namespace: "default", Name: "gizmo"})
	if spec := got["spec"].(map[string]any); spec["size"] != 3.0 {
		t.Errorf("Get(Widget gizmo) spec = %v; want size 3", spec)
	}
	// A later apply without the CRD still knows Gadget is cluster-scoped.
	resp = c.apply(t, []byte("apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: cog, namespace: web}\n"), false)
	if r := resp.GetResults()[0]; r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
		t.Errorf("Apply(Gadget with a namespace) = %v; want REJECTED: the stored CRD says cluster-scoped", r.GetOutcome())
	}
}

func TestApplyDryRunWritesNothing(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	resp := c.apply(t, fixture(t, "web.yaml"), true)
	if resp.GetCommitted() || resp.GetResults()[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_CREATED || len(resp.GetResults()[0].GetObjectJson()) == 0 {
		t.Errorf("Apply(dry run) = committed %v, %v; want not committed, CREATED with the object", resp.GetCommitted(), outcomes(resp))
	}
	list, err := c.objects.List(ctx(t), &hubv1.ListRequest{Kind: "Deployment"})
	if err != nil || len(list.GetObjects()) != 0 {
		t.Errorf("List(Deployment) after a dry run = %v, %v; want none", list.GetObjects(), err)
	}
}

func TestListDeleteAndRevisions(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	c.apply(t, []byte(`[
{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "x", "labels": {"tier": "web"}}},
{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "x", "labels": {"tier": "db"}}},
{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "y"}}]}]`), false)
	for _, tt := range []struct {
		req  *hubv1.ListRequest
		want []string
	}{
		{&hubv1.ListRequest{Kind: "ConfigMap"}, []string{"x/a", "x/b", "y/c"}},
		{&hubv1.ListRequest{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "x"}, []string{"x/a", "x/b"}},
		{&hubv1.ListRequest{Kind: "ConfigMap", LabelSelector: "tier!=db"}, []string{"x/a", "y/c"}},
	} {
		if got := listNames(t, c, tt.req); !cmp.Equal(got, tt.want) {
			t.Errorf("List(%v) = %v; want %v", tt.req, got, tt.want)
		}
	}
	page, err := c.objects.List(ctx(t), &hubv1.ListRequest{Kind: "ConfigMap", PageSize: 2})
	if err != nil || len(page.GetObjects()) != 2 || page.GetNextPageToken() == "" {
		t.Fatalf("List(page size 2) = %v, %v; want 2 objects and a token", page, err)
	}
	if got := listNames(t, c, &hubv1.ListRequest{Kind: "ConfigMap", PageToken: page.GetNextPageToken()}); !cmp.Equal(got, []string{"y/c"}) {
		t.Errorf("List(next page) = %v; want [y/c]", got)
	}
	ref := &hubv1.ObjectRef{Kind: "ConfigMap", Namespace: "x", Name: "a"}
	if _, err := c.objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: ref, ExpectedRevision: 1}); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Delete(stale expected revision) = %v; want FailedPrecondition", err)
	}
	if _, err := c.objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: ref, DryRun: true}); err != nil {
		t.Errorf("Delete(dry run) = %v", err)
	}
	if _, err := c.objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: ref}); err != nil {
		t.Errorf("Delete = %v", err)
	}
	if _, err := c.objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: ref}); status.Code(err) != codes.NotFound {
		t.Errorf("second Delete = %v; want NotFound", err)
	}
	if _, err := c.objects.List(ctx(t), &hubv1.ListRequest{Kind: "Widget"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("List(kind Widget without apiVersion) = %v; want InvalidArgument", err)
	}
}

func listNames(t *testing.T, c *client, req *hubv1.ListRequest) []string {
	t.Helper()
	resp, err := c.objects.List(ctx(t), req)
	if err != nil {
		t.Fatalf("List(%v): %v", req, err)
	}
	var out []string
	for _, o := range resp.GetObjects() {
		out = append(out, o.GetRef().GetNamespace()+"/"+o.GetRef().GetName())
	}
	return out
}

// getObject gets an object and decodes its JSON.
func getObject(t *testing.T, c *client, ref *hubv1.ObjectRef) map[string]any {
	t.Helper()
	resp, err := c.objects.Get(ctx(t), &hubv1.GetRequest{Ref: ref})
	if err != nil {
		t.Fatalf("Get(%v): %v", ref, err)
	}
	var obj map[string]any
	if err := json.Unmarshal(resp.GetObject().GetObjectJson(), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}
