package aggregate

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/store"
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

// TestAckReportDigests: acks and reports go through the store and back
// into memory; late reports of a superseded version and unknown work keys
// are ignored; an ack of a deletion forgets the work, in memory and in
// the store. Another aggregator on the same store (another replica, or
// this one restarted) holds the same.
func TestAckReportDigests(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, _ := e.start(Config{})
	steps := []struct {
		name string
		do   func() error
	}{
		{"report v1", func() error {
			return a.Report(ctx, "m1", report("v1", manifest("web", agentv1.Health_HEALTH_HEALTHY, true, "{}")))
		}},
		{"ack v2", func() error {
			return a.Ack(ctx, "m1", &agentv1.Ack{WorkKey: workKey, Version: "v2", Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED})
		}},
		{"late report of v1, discarded", func() error { return a.Report(ctx, "m1", report("v1")) }},
		{"report of an unknown work key, ignored", func() error {
			return a.Report(ctx, "m1", &agentv1.StatusReport{WorkKey: "nonsense", Version: "v9"})
		}},
		{"m2 reports v2", func() error { return a.Report(ctx, "m2", report("v2")) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	e.waitDigests(a, "m2", map[string]syncstate.Digest{workKey: {Version: "v2", Digest: "d-v2"}})
	other, _ := e.start(Config{})
	for name, agg := range map[string]*Aggregator{"relaying": a, "other": other} {
		e.waitDigests(agg, "m1", map[string]syncstate.Digest{workKey: {Version: "v1", Digest: "d-v1"}})
		obs := agg.observations("/tether/bindings/" + workKey)
		if got := obs["m1"]; got.Latest != "v2" || got.Report.GetVersion() != "v1" || len(got.Report.GetManifests()) != 1 || got.Ack.GetVersion() != "v2" {
			t.Errorf("%s aggregator: m1 observation = %+v; want the v1 report kept, the v2 ack, latest v2", name, got)
		}
	}
	if err := a.Ack(ctx, "m1", &agentv1.Ack{WorkKey: workKey, Result: agentv1.ApplyResult_APPLY_RESULT_DELETED}); err != nil {
		t.Fatal(err)
	}
	e.waitDigests(other, "m1", map[string]syncstate.Digest{})
	e.waitDigests(a, "m1", map[string]syncstate.Digest{})
	if n, err := e.st.Count(ctx, store.ReportsOf("m1")); err != nil || n != 0 {
		t.Errorf("records of m1 after the deletion ack: %d, %v; want none", n, err)
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
			got, err := fold.Template(context.Background(), interp, deployment(t), nil, tt.items)
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

func itoa(n int) string { return string(rune('0' + n)) }
