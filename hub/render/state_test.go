package render

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

func upsert(key, version string) *agentv1.WorkUpsert {
	return &agentv1.WorkUpsert{WorkKey: key, Version: version, Manifests: [][]byte{[]byte(`{}`)}}
}

func setPlan(key string, up *agentv1.WorkUpsert, clusters ...string) *plan {
	p := &plan{key: key, exists: true, vouch: map[string]bool{}, set: map[string]*agentv1.WorkUpsert{}}
	for _, c := range clusters {
		p.vouch[c], p.set[c] = true, up
	}
	return p
}

func dropPlan(key string, policy agentv1.DeletionPolicy, clusters ...string) *plan {
	return &plan{key: key, policy: policy, drop: clusters}
}

// stateRenderer is a Renderer whose state the test commits directly.
func stateRenderer(retention time.Duration, maxRemoved int) *Renderer {
	return &Renderer{state: newState(retention, maxRemoved)}
}

func TestStateHistory(t *testing.T) {
	r := stateRenderer(time.Hour, 2)
	s, now := r.state, time.Unix(0, 0)
	ctx := context.Background()
	s.commit([]*plan{setPlan("k1", upsert("k1", "v1"), "a"), setPlan("k2", upsert("k2", "v2"), "a"), setPlan("k3", upsert("k3", "v3"), "a")}, nil, now)
	_, rev0, _ := r.Current(ctx, "a")
	s.commit([]*plan{setPlan("k1", upsert("k1", "v1b"), "a")}, nil, now)
	s.commit([]*plan{dropPlan("k2", agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN, "a")}, nil, now)
	s.commit([]*plan{setPlan("k1", upsert("k1", "v1c"), "a")}, nil, now)

	ch, _, _, err := r.Changes(ctx, "a", rev0)
	want := []agentv1Change{{"k2", false, agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN, 0}, {"k1", true, 0, 0}}
	if diff := cmp.Diff(want, summarize(ch)); err != nil || diff != "" {
		t.Fatalf("Changes(a, %d) err %v (-want +got):\n%s", rev0, err, diff)
	}
	if ch[1].Work.GetVersion() != "v1c" {
		t.Errorf("Changes(a) k1 = %s; want the latest, v1c", ch[1].Work.GetVersion())
	}

	// Two more removals exceed MaxRemoved=2: k2's is forgotten and the
	// history before it is gone.
	s.commit([]*plan{dropPlan("k1", 0, "a"), dropPlan("k3", 0, "a")}, nil, now)
	if _, _, _, err := r.Changes(ctx, "a", rev0); !errors.Is(err, ErrRevisionGone) {
		t.Errorf("Changes(a, %d) after trimming = %v; want ErrRevisionGone", rev0, err)
	}
	gone, _ := r.Gone(ctx, "a", []string{"k1", "k2", "k3"})
	if diff := cmp.Diff([]string{"k1", "k3"}, keysOf(gone)); diff != "" {
		t.Errorf("Gone(a) (-want +got):\n%s", diff)
	}

	// Retention: an hour later the removals are forgotten at the next
	// change of the cluster.
	s.commit([]*plan{setPlan("k4", upsert("k4", "v4"), "a")}, nil, now.Add(2*time.Hour))
	if gone, _ := r.Gone(ctx, "a", []string{"k1", "k3"}); len(gone) != 0 {
		t.Errorf("Gone(a) after the retention = %v; want nothing", keysOf(gone))
	}
}

func TestStateSharesContents(t *testing.T) {
	r := stateRenderer(time.Hour, 10)
	s := r.state
	// Each cluster gets its own, equal, rendered copy: one is kept.
	var plans []*plan
	for _, c := range []string{"a", "b", "c"} {
		plans = append(plans, setPlan("k", upsert("k", "v1"), c))
	}
	for _, p := range plans {
		s.commit([]*plan{p}, nil, time.Now())
	}
	if st := r.Stats(); st.Contents != 1 || st.Works != 3 {
		t.Fatalf("Stats = %+v; want 1 content for 3 works", st)
	}
	a, _, _ := r.Current(context.Background(), "a")
	c, _, _ := r.Current(context.Background(), "c")
	if a[0] != c[0] {
		t.Errorf("clusters a and c hold different copies of version v1")
	}
	s.commit([]*plan{setPlan("k", upsert("k", "v2"), "a", "b", "c")}, nil, time.Now())
	if st := r.Stats(); st.Contents != 1 {
		t.Errorf("Stats = %+v; want v1 released once nobody holds it", st)
	}
	s.commit(nil, []string{"a", "b", "c"}, time.Now())
	if st := r.Stats(); st.Contents != 0 || st.Clusters != 0 {
		t.Errorf("Stats = %+v; want nothing after the clusters were deleted", st)
	}
}

// TestFailedRenderKeepsVersionAndRetries: a cluster whose render fails
// keeps the version it has, and the key is retried.
func TestFailedRenderKeepsVersionAndRetries(t *testing.T) {
	r := New(nil, testInterpreter(t), Config{}, hclog.NewNullLogger())
	r.in = newInputs()
	r.in.templates[webKey] = object(t, deploymentYAML)
	r.in.bindings[webKey] = binding(divided(), 6, target("a", 2))
	r.in.clusters["a"] = cluster("a", "eu")
	r.in.markAll(webKey)
	ctx := context.Background()
	r.flush(ctx)
	before, _, _ := r.Current(ctx, "a")

	r.interp = failingInterpreter{}
	r.in.templates[webKey].SetLabels(map[string]string{"changed": "yes"})
	r.in.markAll(webKey)
	r.flush(ctx)
	after, _, _ := r.Current(ctx, "a")
	if len(after) != 1 || after[0] != before[0] {
		t.Errorf("Current(a) after a failed render = %v; want the previous version kept", after)
	}
	if _, ok := r.retries[webKey]; !ok {
		t.Errorf("retries = %v; want %s scheduled", r.retries, webKey)
	}

	r.interp = testInterpreter(t)
	r.in.markAll(webKey)
	r.flush(ctx)
	if _, ok := r.retries[webKey]; ok {
		t.Errorf("retries = %v; want %s forgotten after it rendered", r.retries, webKey)
	}
	if got, _, _ := r.Current(ctx, "a"); got[0].GetVersion() == before[0].GetVersion() {
		t.Errorf("Current(a) kept version %s; want the changed template's", got[0].GetVersion())
	}
}

// TestClusterSet: a set built from a map is sorted and nil only for a nil
// map (Gone tells "vouches for nothing" from "for no cluster"); updated
// adds and drops without changing the set it was called on.
func TestClusterSet(t *testing.T) {
	if newClusterSet(nil) != nil {
		t.Error("set of a nil map is not nil")
	}
	if s := newClusterSet(map[string]bool{}); s == nil || len(s) != 0 {
		t.Errorf("set of an empty map = %#v; want empty, not nil", s)
	}
	s := newClusterSet(map[string]bool{"m3": true, "m1": true, "m2": true})
	if !slices.Equal(s, clusterSet{"m1", "m2", "m3"}) || !s.has("m2") || s.has("m4") {
		t.Errorf("set = %v; want m1 m2 m3, holding m2 and not m4", s)
	}
	up := &agentv1.WorkUpsert{}
	got := s.updated(map[string]*agentv1.WorkUpsert{"m0": up, "m2": up, "m5": up}, []string{"m3", "m9"})
	if !slices.Equal(got, clusterSet{"m0", "m1", "m2", "m5"}) {
		t.Errorf("updated = %v; want m0 m1 m2 m5", got)
	}
	if !slices.Equal(s, clusterSet{"m1", "m2", "m3"}) {
		t.Errorf("updated changed the set it was called on: %v", s)
	}
}
