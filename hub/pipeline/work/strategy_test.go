package work

import (
	"context"
	"strings"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// TestRenderApplyStrategy: the template's apply.tether.io/strategy
// annotation reaches the work's apply options, next to the binding's
// conflict resolution; no annotation is ServerSideApply; an unknown value
// fails the render naming the annotation and the allowed values.
func TestRenderApplyStrategy(t *testing.T) {
	cases := []struct {
		value    string // "" for no annotation
		conflict policyv1alpha1.ConflictResolution
		want     agentv1.ApplyStrategy
		wantCR   agentv1.ConflictResolution
	}{
		{"", "", agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY, agentv1.ConflictResolution_CONFLICT_RESOLUTION_ABORT},
		{"ServerSideApply", policyv1alpha1.ConflictOverwrite, agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY, agentv1.ConflictResolution_CONFLICT_RESOLUTION_OVERWRITE},
		{"Update", policyv1alpha1.ConflictOverwrite, agentv1.ApplyStrategy_APPLY_STRATEGY_UPDATE, agentv1.ConflictResolution_CONFLICT_RESOLUTION_OVERWRITE},
		{"CreateOnly", policyv1alpha1.ConflictAbort, agentv1.ApplyStrategy_APPLY_STRATEGY_CREATE_ONLY, agentv1.ConflictResolution_CONFLICT_RESOLUTION_ABORT},
		{"ReadOnly", "", agentv1.ApplyStrategy_APPLY_STRATEGY_READ_ONLY, agentv1.ConflictResolution_CONFLICT_RESOLUTION_ABORT},
	}
	versions := map[string]string{}
	for _, tc := range cases {
		b := binding(duplicated(), 6, target("eu-1", 6))
		b.Spec.ConflictResolution = tc.conflict
		tmpl := object(t, deploymentYAML)
		if tc.value != "" {
			tmpl.SetAnnotations(map[string]string{AnnotationApplyStrategy: tc.value})
		}
		w := mustRender(t, Input{Template: tmpl, Binding: b, Cluster: cluster("eu-1", "eu")})
		o := w.Upsert.GetApplyOptions()
		if o.GetStrategy() != tc.want || o.GetConflictResolution() != tc.wantCR {
			t.Errorf("annotation %q, conflictResolution %q: options %v; want strategy %v, conflict resolution %v",
				tc.value, tc.conflict, o, tc.want, tc.wantCR)
		}
		wantName := tc.value
		if wantName == "" {
			wantName = "ServerSideApply"
		}
		if got := StrategyName(o.GetStrategy()); got != wantName {
			t.Errorf("StrategyName(%v) = %q; want %q", o.GetStrategy(), got, wantName)
		}
		versions[w.Upsert.GetVersion()] = tc.value
	}
	if len(versions) != len(cases) {
		t.Errorf("%d versions for %d different options; a strategy change must change the version", len(versions), len(cases))
	}

	tmpl := object(t, deploymentYAML)
	tmpl.SetAnnotations(map[string]string{AnnotationApplyStrategy: "Replace"})
	_, err := Render(context.Background(), Input{Template: tmpl, Binding: binding(duplicated(), 6, target("eu-1", 6)), Cluster: cluster("eu-1", "eu")}, nil)
	if err == nil || !strings.Contains(err.Error(), AnnotationApplyStrategy) || !strings.Contains(err.Error(), `"Replace"`) ||
		!strings.Contains(err.Error(), "ServerSideApply, Update, CreateOnly, ReadOnly") {
		t.Errorf("Render with strategy Replace: err = %v; want one naming %s, the value and the allowed values", err, AnnotationApplyStrategy)
	}
}
