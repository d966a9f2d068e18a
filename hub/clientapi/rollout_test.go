package clientapi_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
	"github.com/tetherproj/tether/hub/store"
)

// TestRolloutService: a viewer of the namespace reads a rollout and may
// not steer it; an editor of the namespace pauses and resumes it (the
// stored record changes); another namespace's editor is refused; a
// template without a rollout is NOT_FOUND; undo without a previous
// revision is FAILED_PRECONDITION.
func TestRolloutService(t *testing.T) {
	h := startRolesHub(t)
	namespaces(t, h)
	h.dial(t, root).apply(t, deployment("team-a", "web"), false)
	h.setRole(t, "alice", hubv1.Role_ROLE_EDITOR, "team-a")
	h.setRole(t, "bob", hubv1.Role_ROLE_READ_ONLY, "team-a")
	key := "apps/Deployment/team-a/web"
	rec := rollout.Record{Policy: "team-a/web", State: rollout.State{Revision: "r2", Stable: "r1", Phase: rollout.Progressing,
		Clusters: map[string]rollout.ClusterState{"m1": {Phase: rollout.Updating, Revision: "r2"}, "m2": {Phase: rollout.Pending}}}}
	data, _ := json.Marshal(rec)
	if _, err := h.st.Put(ctx(t), store.RolloutKey(key), data); err != nil {
		t.Fatal(err)
	}
	ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a", Name: "web"}

	viewerC := hubv1.NewRolloutServiceClient(h.conn(t, bob))
	editorC := hubv1.NewRolloutServiceClient(h.conn(t, alice))

	got, err := viewerC.GetRollout(ctx(t), &hubv1.GetRolloutRequest{Template: ref})
	if err != nil || got.GetStatus().GetPhase() != "Progressing" || len(got.GetStatus().GetClusters()) != 2 ||
		got.GetStatus().GetClusters()[0].GetCluster() != "m1" || got.GetStatus().GetClusters()[0].GetPhase() != "Updating" {
		t.Fatalf("Status as a viewer = %v, %v; want Progressing with m1 Updating, m2", got, err)
	}
	_, err = viewerC.PauseRollout(ctx(t), &hubv1.PauseRolloutRequest{Template: ref})
	refused(t, "Pause as a viewer", err, "needs an editor or admin")

	if _, err := editorC.PauseRollout(ctx(t), &hubv1.PauseRolloutRequest{Template: ref}); err != nil {
		t.Fatalf("Pause as team-a's editor = %v", err)
	}
	if held := storedRecord(t, h, key).State.Held; !held {
		t.Errorf("stored record after Pause: held = false; want true")
	}
	if _, err := editorC.ResumeRollout(ctx(t), &hubv1.ResumeRolloutRequest{Template: ref}); err != nil {
		t.Fatalf("Resume as team-a's editor = %v", err)
	}
	if held := storedRecord(t, h, key).State.Held; held {
		t.Errorf("stored record after Resume: held = true; want false")
	}
	_, err = editorC.UndoRollout(ctx(t), &hubv1.UndoRolloutRequest{Template: ref})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Undo without history = %v; want FAILED_PRECONDITION", err)
	}

	h.dial(t, root).apply(t, deployment("team-b", "web"), false)
	refB := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "team-b", Name: "web"}
	_, err = editorC.PauseRollout(ctx(t), &hubv1.PauseRolloutRequest{Template: refB})
	refused(t, "Pause in team-b as team-a's editor", err, `namespace "team-b"`)
	_, err = hubv1.NewRolloutServiceClient(h.conn(t, root)).GetRollout(ctx(t), &hubv1.GetRolloutRequest{Template: refB})
	if status.Code(err) != codes.NotFound {
		t.Errorf("Status of a template without a rollout = %v; want NOT_FOUND", err)
	}
}

func storedRecord(t *testing.T, h *hub, key string) *rollout.Record {
	t.Helper()
	kv, err := h.st.Get(ctx(t), store.RolloutKey(key))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := rollout.DecodeRecord(kv.Value)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestRolloutConditionInTemplateStatus: a template whose rollout paused
// on failures says so in its .status (Get and List alike), with the
// failed cluster and the reason; a template without a rollout has no
// such condition.
func TestRolloutConditionInTemplateStatus(t *testing.T) {
	h := startRolesHub(t)
	namespaces(t, h)
	c := h.dial(t, root)
	c.apply(t, deployment("team-a", "web"), false)
	c.apply(t, deployment("team-a", "api"), false)
	rec := rollout.Record{Policy: "team-a/web", State: rollout.State{Revision: "r2", Stable: "r1", Phase: rollout.Paused,
		Message:  "1 clusters failed (m1), more than maxFailures 0",
		Clusters: map[string]rollout.ClusterState{"m1": {Phase: rollout.Failed, Revision: "r2"}, "m2": {Phase: rollout.Pending}}}}
	data, _ := json.Marshal(rec)
	if _, err := h.st.Put(ctx(t), store.RolloutKey("apps/Deployment/team-a/web"), data); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": rollout.ConditionType, "status": "False", "reason": "Paused",
		"message": "RolloutPolicy team-a/web: revision r2 succeeded on 0/2 clusters; failed: m1; 1 clusters failed (m1), more than maxFailures 0"}

	web := getObject(t, c, &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a", Name: "web"})
	if got := rolloutCondition(web); !reflect.DeepEqual(got, want) {
		t.Errorf("Get: the template's rollout condition = %v; want %v", got, want)
	}
	list, err := c.objects.List(ctx(t), &hubv1.ListRequest{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, o := range list.GetObjects() {
		var obj map[string]any
		if err := json.Unmarshal(o.GetObjectJson(), &obj); err != nil {
			t.Fatal(err)
		}
		byName[o.GetRef().GetName()] = obj
	}
	if got := rolloutCondition(byName["web"]); !reflect.DeepEqual(got, want) {
		t.Errorf("List: web's rollout condition = %v; want %v", got, want)
	}
	if got := rolloutCondition(byName["api"]); got != nil {
		t.Errorf("List: api, which no rollout paces, has rollout condition %v; want none", got)
	}
}

// rolloutCondition is the condition of type rollout.ConditionType in obj's
// .status, or nil.
func rolloutCondition(obj map[string]any) map[string]any {
	status, _ := obj["status"].(map[string]any)
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == rollout.ConditionType {
			return m
		}
	}
	return nil
}
