package ctl

import (
	"strings"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// TestPrintResultsPartial: a partial response prints what was stored on
// stdout, what failed (with why) and what was skipped on stderr, and is an
// error saying how many objects were not written.
func TestPrintResultsPartial(t *testing.T) {
	ref := func(kind, name string) *hubv1.ObjectRef { return &hubv1.ObjectRef{Kind: kind, Name: name} }
	resp := &hubv1.ApplyResponse{Partial: true, Results: []*hubv1.ApplyResult{
		{Ref: ref("Deployment", "web"), Outcome: hubv1.ApplyOutcome_APPLY_OUTCOME_SKIPPED, Message: "deployment.apps x/web not written: a write before it failed"},
		{Ref: ref("ConfigMap", "cfg"), Outcome: hubv1.ApplyOutcome_APPLY_OUTCOME_FAILED, Message: "configmap x/cfg not written: changed meanwhile"},
		{Ref: ref("Namespace", "x"), Outcome: hubv1.ApplyOutcome_APPLY_OUTCOME_CREATED, Revision: 7},
	}}
	var out, errOut strings.Builder
	err := printResults(IO{Out: &out, Err: &errOut}, resp, "")
	if want := "namespace/x created\n"; out.String() != want {
		t.Errorf("stdout %q; want %q", out.String(), want)
	}
	wantErr := "deployment/web skipped: deployment.apps x/web not written: a write before it failed\n" +
		"configmap/cfg failed: configmap x/cfg not written: changed meanwhile\n"
	if errOut.String() != wantErr {
		t.Errorf("stderr %q; want %q", errOut.String(), wantErr)
	}
	if err == nil || !strings.Contains(err.Error(), "2 of 3 objects not written (1 failed, 1 skipped)") {
		t.Errorf("printResults = %v; want an error counting 2 of 3 not written", err)
	}
}
