package aggregate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/clusters"
	"github.com/tetherproj/tether/hub/syncstate"
	"github.com/tetherproj/tether/internal/interpreter"
)

const workKey = "apps/Deployment/prod/web"

func newInterpreter(t testing.TB) *interpreter.Interpreter {
	t.Helper()
	i, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("interpreter.New: %v", err)
	}
	return i
}

func TestAckReportDigests(t *testing.T) {
	ctx := context.Background()
	a := New(nil, newInterpreter(t), clusters.New(clusters.Config{}), Config{}, hclog.NewNullLogger())
	steps := []struct {
		name string
		do   func()
	}{
		{"report v1", func() { a.Report(ctx, "m1", report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, "{}"))) }},
		{"ack v2", func() {
			a.Ack(ctx, "m1", &agentv1.Ack{WorkKey: workKey, Version: "v2", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED})
		}},
		{"late report of v1, discarded", func() { a.Report(ctx, "m1", report("v1")) }},
		{"report of an unknown work key, ignored", func() { a.Report(ctx, "m1", &agentv1.StatusReport{WorkKey: "nonsense", Version: "v9"}) }},
		{"m2 reports v2", func() { a.Report(ctx, "m2", report("v2")) }},
	}
	for _, s := range steps {
		s.do()
	}
	obs := a.observations("/tether/bindings/" + workKey)
	if got := obs["m1"]; got.Latest != "v2" || got.Report.GetVersion() != "v1" || len(got.Report.GetManifests()) != 1 || got.Ack.GetVersion() != "v2" {
		t.Errorf("m1 observation = %+v; want the v1 report kept, the v2 ack, latest v2", got)
	}
	d, _ := a.Digests(ctx, "m1")
	if diff := cmp.Diff(map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}}, d); diff != "" {
		t.Errorf("Digests(m1) (-want +got):\n%s", diff)
	}
	if pending := a.takePending(); len(pending) != 1 {
		t.Errorf("pending = %v; want the one binding", pending)
	}
	a.Ack(ctx, "m1", &agentv1.Ack{WorkKey: workKey, Result: agentv1.ApplyResult_APPLY_RESULT_DELETED})
	if d, _ := a.Digests(ctx, "m1"); len(d) != 0 {
		t.Errorf("Digests(m1) after a deletion ack = %v; want none", d)
	}
	if d, _ := a.Digests(ctx, "m2"); len(d) != 1 {
		t.Errorf("Digests(m2) = %v; want its report", d)
	}
}

func deployment(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod","generation":1},"spec":{"replicas":3}}`)); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestTemplateStatusExcludesStale(t *testing.T) {
	interp := newInterpreter(t)
	member := func(ready int) string {
		return `{"generation":1,"resourceTemplateGeneration":1,"observedGeneration":1,"replicas":` + itoa(ready) + `,"readyReplicas":` + itoa(ready) + `,"availableReplicas":` + itoa(ready) + `}`
	}
	fresh := []configv1alpha1.AggregatedStatusItem{
		{ClusterName: "m1", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(member(2))},
		{ClusterName: "m2", Applied: true, Health: configv1alpha1.ResourceHealthy, Status: raw(member(1))},
	}
	b := webBinding("m1", "m2")
	b.Status.AggregatedStatus = fresh
	items, _ := BuildItems(b, ItemsInput{Stale: func(c string) bool { return c == "m2" }, HealthHook: true})
	tests := []struct {
		name        string
		items       []configv1alpha1.AggregatedStatusItem
		wantReady   int64
		wantObsGen  bool
		wantReplica int64
	}{
		{"both fresh", fresh, 3, true, 3},
		{"m2 stale", items, 2, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := templateStatus(context.Background(), interp, deployment(t), nil, tt.items)
			if err != nil {
				t.Fatalf("templateStatus: %v", err)
			}
			var st map[string]any
			if err := json.Unmarshal(got, &st); err != nil {
				t.Fatal(err)
			}
			_, hasObsGen := st["observedGeneration"]
			if st["readyReplicas"] != float64(tt.wantReady) || st["replicas"] != float64(tt.wantReplica) || hasObsGen != tt.wantObsGen {
				t.Errorf("template status = %s; want readyReplicas %d, replicas %d, observedGeneration set %v", got, tt.wantReady, tt.wantReplica, tt.wantObsGen)
			}
		})
	}
}

func TestKeepConditionTimes(t *testing.T) {
	prev := map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "old"}}}
	cur := map[string]any{"conditions": []any{
		map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "new"},
		map[string]any{"type": "Failed", "status": "True", "lastTransitionTime": "new"},
	}}
	keepConditionTimes(cur, prev)
	conds := cur["conditions"].([]any)
	if conds[0].(map[string]any)["lastTransitionTime"] != "old" || conds[1].(map[string]any)["lastTransitionTime"] != "new" {
		t.Errorf("conditions = %v; want the unchanged one's time kept, the new one's left", conds)
	}
}

func TestMergeInto(t *testing.T) {
	b := webBinding("m1")
	obj := deployment(t)
	if err := MergeInto(obj, b); err != nil || obj.Object["status"] != nil {
		t.Errorf("MergeInto without a template status = %v, status %v; want obj untouched", err, obj.Object["status"])
	}
	b.Annotations = map[string]string{AnnotationTemplateStatus: `{"readyReplicas":3}`}
	if err := MergeInto(obj, b); err != nil {
		t.Fatalf("MergeInto: %v", err)
	}
	if got, _, _ := unstructured.NestedInt64(obj.Object, "status", "readyReplicas"); got != 3 {
		t.Errorf("status.readyReplicas = %d; want 3", got)
	}
}

func itoa(n int) string { return string(rune('0' + n)) }
