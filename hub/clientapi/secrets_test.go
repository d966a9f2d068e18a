package clientapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
)

const healthRIC = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: web-health}
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj) return true end
`

// TestViewerSimulateRunsNoUserLua: a customization given to Simulate has
// its Lua run on the hub (load-time check and dry run), so a viewer's
// Simulate with one is PERMISSION_DENIED naming it, before any script
// runs; a viewer's Simulate without customizations and an admin's with
// one still work.
func TestViewerSimulateRunsNoUserLua(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	v, a := h.dial(t, viewer), h.dial(t, admin)
	for name, req := range map[string]*hubv1.SimulateRequest{
		"in the policies": {Template: []byte(apiDeployment), Policies: []byte(healthRIC)},
		"as the template": {Template: []byte(healthRIC)},
	} {
		_, err := v.placements.Simulate(ctx(t), req)
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), `ResourceInterpreterCustomization "web-health"`) ||
			!strings.Contains(err.Error(), "read-only role") {
			t.Errorf("viewer Simulate with a customization %s = %v; want PermissionDenied naming the customization and the role", name, err)
		}
	}
	if _, err := v.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(apiDeployment)}); err != nil {
		t.Errorf("viewer Simulate without customizations = %v; want allowed", err)
	}
	resp, err := a.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(apiDeployment), Policies: []byte(healthRIC)})
	if err != nil || len(resp.GetInputs()) != 2 || resp.GetInputs()[1].GetOutcome() == hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
		t.Errorf("admin Simulate with a customization = %v, %v; want it checked and accepted", resp.GetInputs(), err)
	}
}

const dbSecret = `apiVersion: v1
kind: Secret
metadata: {name: db, namespace: default}
type: Opaque
data: {password: c2VjcmV0}
stringData: {user: root}
`

const dbPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: db, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Secret, name: db}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
`

// secretValues reads a Secret's data and stringData values and the
// redaction annotation from its JSON.
func secretValues(t *testing.T, js []byte) (password, user, annotation string) {
	t.Helper()
	var s struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Data       map[string]string `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	if err := json.Unmarshal(js, &s); err != nil {
		t.Fatalf("decode secret %s: %v", js, err)
	}
	pw, ok1 := s.Data["password"]
	u, ok2 := s.StringData["user"]
	if !ok1 || !ok2 {
		t.Fatalf("secret %s lost its keys; want data.password and stringData.user", js)
	}
	return pw, u, s.Metadata.Annotations[clientapi.RedactedAnnotation]
}

// wantRedacted fails unless js is the db Secret with its values hidden.
func wantRedacted(t *testing.T, what string, js []byte) {
	t.Helper()
	if pw, u, ann := secretValues(t, js); pw != "" || u != "" || ann == "" {
		t.Errorf("%s: password %q, user %q, annotation %q; want empty values and the redaction annotation", what, pw, u, ann)
	}
}

// TestSecretsRedactedForViewers: Get, List, Watch and Simulate show a
// viewer the keys of a Secret's data and stringData with empty values and
// the redaction annotation; an admin sees the data. Applying a redacted
// read back is refused, so it cannot wipe the data.
func TestSecretsRedactedForViewers(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	a, v := h.dial(t, admin), h.dial(t, viewer)
	first := a.apply(t, []byte(dbSecret), false)
	ref := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "Secret", Namespace: "default", Name: "db"}

	got, err := v.objects.Get(ctx(t), &hubv1.GetRequest{Ref: ref})
	if err != nil {
		t.Fatalf("viewer Get: %v", err)
	}
	wantRedacted(t, "viewer Get", got.GetObject().GetObjectJson())
	full, err := a.objects.Get(ctx(t), &hubv1.GetRequest{Ref: ref})
	if err != nil {
		t.Fatalf("admin Get: %v", err)
	}
	if pw, u, ann := secretValues(t, full.GetObject().GetObjectJson()); pw != "c2VjcmV0" || u != "root" || ann != "" {
		t.Errorf("admin Get: password %q, user %q, annotation %q; want the data as applied", pw, u, ann)
	}

	list, err := v.objects.List(ctx(t), &hubv1.ListRequest{Kind: "Secret", Namespace: "default"})
	if err != nil || len(list.GetObjects()) != 1 {
		t.Fatalf("viewer List = %v, %v; want the Secret", list, err)
	}
	wantRedacted(t, "viewer List", list.GetObjects()[0].GetObjectJson())

	stream, err := v.objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "Secret", StartRevision: first.GetRevision() - 1})
	if err != nil {
		t.Fatalf("viewer Watch: %v", err)
	}
	ev, err := stream.Recv()
	if err != nil {
		t.Fatalf("viewer Watch Recv: %v", err)
	}
	wantRedacted(t, "viewer Watch", ev.GetObject().GetObjectJson())

	sim, err := v.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(dbSecret), Policies: []byte(dbPolicy)})
	if err != nil || len(sim.GetRendered()) != 1 {
		t.Fatalf("viewer Simulate = %v, %v; want the Secret rendered for m1", sim, err)
	}
	wantRedacted(t, "viewer Simulate input", sim.GetInputs()[0].GetObjectJson())
	wantRedacted(t, "viewer Simulate rendered", sim.GetRendered()[0].GetObjectsJson()[0])

	resp, err := a.objects.Apply(ctx(t), &hubv1.ApplyRequest{Manifests: got.GetObject().GetObjectJson()})
	if err != nil || resp.GetCommitted() || !strings.Contains(resp.GetResults()[0].GetMessage(), clientapi.RedactedAnnotation) {
		t.Errorf("admin Apply of a viewer's read = %v, %v; want it REJECTED naming %s", resp, err, clientapi.RedactedAnnotation)
	}
}
