package render

import (
	"context"
	"testing"

	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/syncstate"
)

// broken are the ways a render goes wrong that make its key unknown. A
// render that fails does so after the plan decided which clusters the
// binding left (decidesDrops); a panic leaves nothing of the plan known.
var broken = []struct {
	name         string
	interp       func(t *testing.T) work.Interpreter
	decidesDrops bool
}{
	{"panics", func(t *testing.T) work.Interpreter { return panicky{testInterpreter(t)} }, false},
	{"fails", func(t *testing.T) work.Interpreter { return failingInterpreter{} }, true},
}

// restartedRenderer is a renderer with no published state (a hub just
// restarted) whose inputs hold api, Divided over clusters a and b; c
// exists and is not a target.
func restartedRenderer(t *testing.T, interp work.Interpreter) *Renderer {
	r := New(nil, interp, Config{}, hclog.NewNullLogger())
	r.in = newInputs()
	r.in.templates[apiKey] = named(t, "api")
	b := binding(divided(), 6, target("a", 3), target("b", 3))
	b.Name = "api-deployment"
	r.in.bindings[apiKey] = b
	for _, c := range []string{"a", "b", "c"} {
		r.in.clusters[c] = cluster(c, "eu")
	}
	return r
}

// keepFor is Gone's answer for a key the cluster is to keep.
func keepFor(key string) []syncstate.Change { return []syncstate.Change{{Key: key, Keep: true}} }

// TestUnrenderedKeyKeptAfterRestart: right after a restart, a key whose
// first render panics or fails has no published version, yet every
// cluster its binding targets gets Keep for it (so an authoritative
// SyncDone lists it) and the renderer is not authoritative for them until
// it renders; a cluster it is not on is unaffected. Before, a panicking
// key was left out of Gone: absent from the key set, the agents deleted
// it.
func TestUnrenderedKeyKeptAfterRestart(t *testing.T) {
	for _, tc := range broken {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := restartedRenderer(t, tc.interp(t))
			r.in.markAll(apiKey)
			r.flush(ctx)
			for _, c := range []string{"a", "b"} {
				if works, _, _ := r.Current(ctx, c); len(works) != 0 {
					t.Fatalf("Current(%s) = %d works; want none while api does not render", c, len(works))
				}
				gone, err := r.Gone(ctx, c, []string{apiKey})
				if err != nil || !equalChanges(gone, keepFor(apiKey)) {
					t.Errorf("Gone(%s, api) = %v, %v; want Keep", c, gone, err)
				}
				if r.Authoritative(c) {
					t.Errorf("Authoritative(%s) = true while api, which it may hold, does not render; want false", c)
				}
			}
			if !r.Authoritative("c") {
				t.Errorf("Authoritative(c) = false; want true: api is not on c")
			}

			r.interp = testInterpreter(t)
			r.in.markAll(apiKey)
			r.flush(ctx)
			for _, c := range []string{"a", "b"} {
				if works, _, _ := r.Current(ctx, c); len(works) != 1 {
					t.Errorf("Current(%s) = %d works once api renders; want 1", c, len(works))
				}
				if !r.Authoritative(c) {
					t.Errorf("Authoritative(%s) = false once api renders; want true", c)
				}
			}
		})
	}
}

// TestUnrenderedKeyKeepsWhereItMayBe: a key published on a and b whose
// render then panics or fails, while its binding drops b: a keeps its
// version and the renderer is not authoritative for it. When the render
// failed, b, which the decoded binding positively no longer targets,
// loses the work and stays authoritative; when it panicked, nothing of
// the plan is known and b is kept as a is.
func TestUnrenderedKeyKeepsWhereItMayBe(t *testing.T) {
	for _, tc := range broken {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := restartedRenderer(t, testInterpreter(t))
			r.in.markAll(apiKey)
			r.flush(ctx)
			before, _, _ := r.Current(ctx, "a")

			r.interp = tc.interp(t)
			b := binding(divided(), 6, target("a", 6))
			b.Name = "api-deployment"
			r.in.bindings[apiKey] = b
			r.in.markAll(apiKey)
			r.flush(ctx)
			after, _, _ := r.Current(ctx, "a")
			if len(after) != 1 || after[0].GetVersion() != before[0].GetVersion() {
				t.Errorf("Current(a) = %v; want api's previous version kept", after)
			}
			if r.Authoritative("a") {
				t.Errorf("Authoritative(a) = true while api does not render; want false")
			}
			if !tc.decidesDrops {
				if works, _, _ := r.Current(ctx, "b"); len(works) != 1 || r.Authoritative("b") {
					t.Errorf("Current(b) = %d works, Authoritative(b) = %t; want api kept and false", len(works), r.Authoritative("b"))
				}
				return
			}
			if works, _, _ := r.Current(ctx, "b"); len(works) != 0 {
				t.Errorf("Current(b) = %d works; want api removed: its binding no longer targets b", len(works))
			}
			gone, err := r.Gone(ctx, "b", []string{apiKey})
			if err != nil || len(gone) != 1 || gone[0].Keep || gone[0].Reason != agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED {
				t.Errorf("Gone(b, api) = %v, %v; want its removal (placement changed)", gone, err)
			}
			if !r.Authoritative("b") {
				t.Errorf("Authoritative(b) = false; want true: the binding positively left b")
			}
		})
	}
}

// TestGonePositiveOnly: a key whose template and binding are absent and
// decodable, with nothing outstanding, is left out of Gone (so an
// authoritative key set lacks it), and it no longer holds the renderer's
// authority back once its render had failed.
func TestGonePositiveOnly(t *testing.T) {
	ctx := context.Background()
	r := restartedRenderer(t, failingInterpreter{})
	r.in.markAll(apiKey)
	r.flush(ctx)
	delete(r.in.templates, apiKey)
	delete(r.in.bindings, apiKey)
	r.in.markAll(apiKey)
	r.flush(ctx)
	if gone, err := r.Gone(ctx, "a", []string{apiKey}); err != nil || len(gone) != 0 {
		t.Errorf("Gone(a, api) = %v, %v after its template and binding were deleted; want it left out", gone, err)
	}
	if !r.Authoritative("a") {
		t.Errorf("Authoritative(a) = false after api was deleted; want true")
	}
}

func equalChanges(got, want []syncstate.Change) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Key != want[i].Key || got[i].Keep != want[i].Keep || got[i].Work != want[i].Work ||
			got[i].Policy != want[i].Policy || got[i].Reason != want[i].Reason {
			return false
		}
	}
	return true
}
