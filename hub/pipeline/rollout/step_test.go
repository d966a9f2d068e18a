package rollout

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

var t0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// progressive is the example: one cluster at a time, 20 s of
// Healthy, 5 minutes to get there, no failure tolerated.
func progressive(t *testing.T, mutate func(*policyv1alpha1.RolloutSpec)) *Strategy {
	t.Helper()
	one := intstr.FromInt32(1)
	spec := policyv1alpha1.RolloutSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
		RolloutStrategy: policyv1alpha1.RolloutStrategy{
			Type: policyv1alpha1.RolloutProgressive,
			Progressive: &policyv1alpha1.RolloutProgressiveParams{MaxConcurrency: &one, RolloutGates: policyv1alpha1.RolloutGates{
				MinSuccessTime: metav1.Duration{Duration: 20 * time.Second}, ProgressDeadline: "5m"}},
		},
	}
	if mutate != nil {
		mutate(&spec)
	}
	p := &policyv1alpha1.RolloutPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}, Spec: spec}
	if errs := p.Validate(); len(errs) > 0 {
		t.Fatalf("test policy is invalid: %v", errs)
	}
	s, err := Compile(&p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

func fleet(names ...string) []Cluster {
	var out []Cluster
	for _, n := range names {
		out = append(out, Cluster{Name: n, Reachable: true, Labels: map[string]string{}})
	}
	return out
}

// stable is a completed rollout of revision "v1" on the clusters.
func stable(clusters []Cluster) State {
	st := State{Revision: "v1", Stable: "v1", Phase: Complete, Clusters: map[string]ClusterState{}}
	for _, c := range clusters {
		st.Clusters[c.Name] = ClusterState{Phase: Succeeded}
	}
	return st
}

func healthy(since time.Time) Report {
	return Report{Applied: true, Health: Healthy, HealthySince: since}
}

func phases(st State) map[string]Phase {
	out := make(map[string]Phase)
	for n, c := range st.Clusters {
		out[n] = c.Phase
	}
	return out
}

func targets(st State, clusters []Cluster) map[string]string {
	out := make(map[string]string)
	for _, c := range clusters {
		out[c.Name] = st.Target(c.Name)
	}
	return out
}

func wantPhases(t *testing.T, when string, st State, want map[string]Phase) {
	t.Helper()
	if d := cmp.Diff(want, phases(st)); d != "" {
		t.Fatalf("%s: phases (-want +got):\n%s", when, d)
	}
}

func TestProgressiveOneAtATimeAfterSoak(t *testing.T) {
	s, cl := progressive(t, nil), fleet("a", "b", "c")
	st, wake := Step(s, "v2", cl, nil, stable(cl), at(0))
	wantPhases(t, "start", st, map[string]Phase{"a": Updating, "b": Pending, "c": Pending})
	if d := cmp.Diff(map[string]string{"a": "v2", "b": "v1", "c": "v1"}, targets(st, cl)); d != "" {
		t.Fatalf("targets at start (-want +got):\n%s", d)
	}
	if wake != at(5*time.Minute) {
		t.Errorf("wake = %v; want the deadline, %v", wake, at(5*time.Minute))
	}
	reports := map[string]Report{"a": healthy(at(5 * time.Second))}
	st, wake = Step(s, "v2", cl, reports, st, at(10*time.Second))
	wantPhases(t, "a healthy for 5 s", st, map[string]Phase{"a": Soaking, "b": Pending, "c": Pending})
	if wake != at(25*time.Second) {
		t.Errorf("wake = %v; want the end of a's soak, %v", wake, at(25*time.Second))
	}
	st, _ = Step(s, "v2", cl, reports, st, at(25*time.Second))
	wantPhases(t, "a soaked", st, map[string]Phase{"a": Succeeded, "b": Updating, "c": Pending})
	reports["b"], reports["c"] = healthy(at(30*time.Second)), healthy(at(60*time.Second))
	st, _ = Step(s, "v2", cl, reports, st, at(50*time.Second))
	wantPhases(t, "b soaked", st, map[string]Phase{"a": Succeeded, "b": Succeeded, "c": Soaking})
	st, wake = Step(s, "v2", cl, reports, st, at(80*time.Second))
	if st.Phase != Complete || st.Stable != "v2" || !wake.IsZero() {
		t.Fatalf("after c soaked: phase %s stable %q wake %v; want Complete, v2, none", st.Phase, st.Stable, wake)
	}
	if d := cmp.Diff(map[string]string{"a": "v2", "b": "v2", "c": "v2"}, targets(st, cl)); d != "" {
		t.Fatalf("targets when complete (-want +got):\n%s", d)
	}
}

func TestNoReportOfTheNewRevisionNeverOpensTheGate(t *testing.T) {
	s, cl := progressive(t, nil), fleet("a", "b")
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	// Applied but not yet Healthy, or Healthy but not applied: neither counts.
	for _, r := range []Report{{Applied: true}, {Health: Healthy, HealthySince: at(0)}} {
		next, _ := Step(s, "v2", cl, map[string]Report{"a": r}, st, at(time.Minute))
		wantPhases(t, "a not yet healthy at v2", next, map[string]Phase{"a": Updating, "b": Pending})
	}
}

func TestUnhealthyPastDeadlinePausesAndOthersKeepStable(t *testing.T) {
	s, cl := progressive(t, nil), fleet("a", "b", "c")
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	bad := map[string]Report{"a": {Applied: true, Health: Unhealthy}}
	st, _ = Step(s, "v2", cl, bad, st, at(time.Minute))
	if c := st.Clusters["a"]; c.Phase != Updating || !strings.Contains(c.Message, "Unhealthy") {
		t.Fatalf("a = %+v; want Updating, Unhealthy", c)
	}
	st, _ = Step(s, "v2", cl, bad, st, at(5*time.Minute))
	wantPhases(t, "deadline", st, map[string]Phase{"a": Failed, "b": Pending, "c": Pending})
	if st.Phase != Paused || !strings.Contains(st.Message, "a") || !strings.Contains(st.Message, "maxFailures 0") {
		t.Fatalf("rollout %s %q; want Paused naming a and maxFailures", st.Phase, st.Message)
	}
	for i := 0; i < 3; i++ {
		st, _ = Step(s, "v2", cl, bad, st, at(time.Duration(6+i)*time.Minute))
	}
	if d := cmp.Diff(map[string]string{"a": "v2", "b": "v1", "c": "v1"}, targets(st, cl)); d != "" {
		t.Fatalf("targets while paused (-want +got):\n%s", d)
	}
	st.Resume()
	st, _ = Step(s, "v2", cl, bad, st, at(10*time.Minute))
	wantPhases(t, "resumed", st, map[string]Phase{"a": Failed, "b": Updating, "c": Pending})
	if st.Phase != Progressing {
		t.Errorf("phase after resume = %s; want Progressing", st.Phase)
	}
}

func TestFailedApplyFailsAtOnce(t *testing.T) {
	s, cl := progressive(t, nil), fleet("a", "b")
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	st, _ = Step(s, "v2", cl, map[string]Report{"a": {Failed: "conflict: owned by another manager"}}, st, at(time.Second))
	if c := st.Clusters["a"]; c.Phase != Failed || c.Message != "conflict: owned by another manager" || st.Phase != Paused {
		t.Fatalf("a = %+v, rollout %s; want Failed with the ack's reason, Paused", c, st.Phase)
	}
}

func TestMaxFailuresTolerated(t *testing.T) {
	s := progressive(t, func(sp *policyv1alpha1.RolloutSpec) {
		one := intstr.FromInt32(1)
		sp.RolloutStrategy.Progressive.MaxFailures = &one
	})
	cl := fleet("a", "b")
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	st, _ = Step(s, "v2", cl, map[string]Report{"a": {Failed: "boom"}}, st, at(time.Second))
	wantPhases(t, "one failure tolerated", st, map[string]Phase{"a": Failed, "b": Updating})
	if st.Phase != Progressing {
		t.Fatalf("phase = %s; want Progressing", st.Phase)
	}
}

func TestMandatoryGroupFirstAndStrict(t *testing.T) {
	s := progressive(t, func(sp *policyv1alpha1.RolloutSpec) {
		two, five := intstr.FromInt32(2), intstr.FromInt32(5)
		p := sp.RolloutStrategy.Progressive
		p.MaxConcurrency, p.MaxFailures = &two, &five
		p.MandatoryDecisionGroups = []policyv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}
	})
	cl := fleet("a", "b", "z")
	cl[2].Labels[policyv1alpha1.DefaultGroupLabel] = "canary"
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	wantPhases(t, "canary first", st, map[string]Phase{"a": Pending, "b": Pending, "z": Updating})
	st, _ = Step(s, "v2", cl, map[string]Report{"z": {Failed: "boom"}}, st, at(time.Second))
	if st.Phase != Paused || !strings.Contains(st.Message, "mandatory decision group: z") {
		t.Fatalf("rollout %s %q; want Paused by the canary's failure despite maxFailures 5", st.Phase, st.Message)
	}
	wantPhases(t, "canary failed", st, map[string]Phase{"a": Pending, "b": Pending, "z": Failed})
}

func TestUnreachableIsSkippedAndGatedWhenBack(t *testing.T) {
	s, cl := progressive(t, nil), fleet("a", "b")
	cl[0].Reachable = false
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	wantPhases(t, "a unreachable", st, map[string]Phase{"a": Skipped, "b": Updating})
	st, _ = Step(s, "v2", cl, map[string]Report{"b": healthy(at(0))}, st, at(30*time.Second))
	if st.Phase != Complete || st.Target("a") != "v2" {
		t.Fatalf("rollout %s, a's target %q; want Complete and a to receive v2 when back", st.Phase, st.Target("a"))
	}
	// In flight, then lost: skipped, keeps what it was given, gated when back.
	st, _ = Step(s, "v3", cl, nil, st, at(time.Minute))
	wantPhases(t, "v3", st, map[string]Phase{"a": Skipped, "b": Updating})
	cl[0].Reachable, cl[1].Reachable = true, false
	st, _ = Step(s, "v3", cl, nil, st, at(2*time.Minute))
	if c := st.Clusters["b"]; c.Phase != Skipped || c.Revision != "v3" {
		t.Fatalf("b = %+v; want Skipped, keeping v3", c)
	}
	if c := st.Clusters["a"]; c.Phase != Updating || !c.Late {
		t.Fatalf("a = %+v; want Updating, late", c)
	}
	cl[1].Reachable = true
	st, _ = Step(s, "v3", cl, map[string]Report{"a": healthy(at(2 * time.Minute))}, st, at(3*time.Minute))
	if c := st.Clusters["b"]; c.Phase != Updating || !c.Late || c.Since != at(3*time.Minute) {
		t.Fatalf("b back = %+v; want Updating again from now, late", c)
	}
}

func TestWindowKeepsAClusterWaitingUntilItOpens(t *testing.T) {
	s := progressive(t, func(sp *policyv1alpha1.RolloutSpec) {
		sp.Windows = []policyv1alpha1.MaintenanceWindow{{
			ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "store"}},
			Schedule:        "0 14 * * *", Duration: metav1.Duration{Duration: time.Hour}}}
	})
	cl := fleet("a", "b")
	cl[0].Labels["tier"] = "store"
	st, wake := Step(s, "v2", cl, nil, stable(cl), at(0)) // 12:00
	wantPhases(t, "12:00", st, map[string]Phase{"a": Waiting, "b": Updating})
	if wake != at(5*time.Minute) {
		t.Errorf("wake = %v; want b's deadline %v", wake, at(5*time.Minute))
	}
	if open, next := s.window(cl[0], at(0)); open || next != at(2*time.Hour) {
		t.Errorf("a's window at 12:00: open %v, opens %v; want closed until %v", open, next, at(2*time.Hour))
	}
	st, _ = Step(s, "v2", cl, map[string]Report{"b": healthy(at(0))}, st, at(time.Minute))
	if st.Phase != Progressing || st.Clusters["a"].Phase != Waiting {
		t.Fatalf("rollout %s a %s; want Progressing with a Waiting", st.Phase, st.Clusters["a"].Phase)
	}
	st, _ = Step(s, "v2", cl, map[string]Report{"b": healthy(at(0))}, st, at(2*time.Hour+time.Minute))
	wantPhases(t, "14:01", st, map[string]Phase{"a": Updating, "b": Succeeded})
	st2, _ := Step(s, "v3", cl, nil, st, at(3*time.Hour+time.Minute)) // 15:01, closed
	if st2.Clusters["a"].Phase != Waiting {
		t.Errorf("a at 15:01 = %s; want Waiting (the window closed at 15:00)", st2.Clusters["a"].Phase)
	}
}

func TestNewRevisionRestartsAndKeepsWhatClustersHave(t *testing.T) {
	s, cl := progressive(t, nil), fleet("a", "b")
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	st, _ = Step(s, "v3", cl, nil, st, at(time.Second))
	if st.Stable != "v1" || st.Target("a") != "v3" || st.Target("b") != "v1" {
		t.Fatalf("stable %q, targets a=%q b=%q; want v1, v3, v1", st.Stable, st.Target("a"), st.Target("b"))
	}
	// b is not admitted for v3 while a is in flight; a, still at v2 in the
	// state before, was admitted to v3 at once as the first of the wave.
	wantPhases(t, "v3", st, map[string]Phase{"a": Updating, "b": Pending})
}

func TestPerGroupTakesAGroupAtATime(t *testing.T) {
	s := progressive(t, func(sp *policyv1alpha1.RolloutSpec) {
		rs := &sp.RolloutStrategy
		rs.Type, rs.GroupBy = policyv1alpha1.RolloutProgressivePerGroup, "region"
		rs.ProgressivePerGroup = &policyv1alpha1.RolloutProgressivePerGroupParams{RolloutGates: rs.Progressive.RolloutGates}
		rs.Progressive = nil
	})
	cl := fleet("eu1", "eu2", "us1", "x")
	cl[0].Labels["region"], cl[1].Labels["region"], cl[2].Labels["region"] = "eu", "eu", "us"
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	wantPhases(t, "eu first", st, map[string]Phase{"eu1": Updating, "eu2": Updating, "us1": Pending, "x": Pending})
	r := map[string]Report{"eu1": healthy(at(0)), "eu2": healthy(at(0))}
	st, _ = Step(s, "v2", cl, r, st, at(time.Minute))
	wantPhases(t, "then us", st, map[string]Phase{"eu1": Succeeded, "eu2": Succeeded, "us1": Updating, "x": Pending})
	r["us1"] = healthy(at(time.Minute))
	st, _ = Step(s, "v2", cl, r, st, at(2*time.Minute))
	wantPhases(t, "unlabelled last", st, map[string]Phase{"eu1": Succeeded, "eu2": Succeeded, "us1": Succeeded, "x": Updating})
}

func TestAllAndPercentConcurrency(t *testing.T) {
	all := progressive(t, func(sp *policyv1alpha1.RolloutSpec) { sp.RolloutStrategy = policyv1alpha1.RolloutStrategy{} })
	cl := fleet("a", "b", "c", "d", "e")
	st, _ := Step(all, "v2", cl, nil, stable(cl), at(0))
	if st.count(Updating) != 5 {
		t.Errorf("All: %v; want every cluster updating", phases(st))
	}
	pct := progressive(t, func(sp *policyv1alpha1.RolloutSpec) {
		v := intstr.FromString("25%")
		sp.RolloutStrategy.Progressive.MaxConcurrency = &v
	})
	st, _ = Step(pct, "v2", cl, nil, stable(cl), at(0))
	if st.count(Updating) != 2 {
		t.Errorf("25%% of 5: %v; want 2 updating (rounded up)", phases(st))
	}
}

func TestOperatorPauseStopsAdmissions(t *testing.T) {
	s, cl := progressive(t, nil), fleet("a", "b")
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	st.Pause()
	st, _ = Step(s, "v2", cl, map[string]Report{"a": healthy(at(0))}, st, at(time.Minute))
	wantPhases(t, "paused", st, map[string]Phase{"a": Succeeded, "b": Pending})
	if st.Phase != Paused || st.Message != "paused by an operator" {
		t.Fatalf("rollout %s %q; want Paused by an operator", st.Phase, st.Message)
	}
	st.Resume()
	st, _ = Step(s, "v2", cl, map[string]Report{"a": healthy(at(0))}, st, at(2*time.Minute))
	wantPhases(t, "resumed", st, map[string]Phase{"a": Succeeded, "b": Updating})
}

// TestStoredStateResumesAtTheSameStep: the state survives a JSON round
// trip (the store) and the next step from the stored copy is the same.
func TestStoredStateResumesAtTheSameStep(t *testing.T) {
	s, cl := progressive(t, nil), fleet("a", "b", "c")
	st, _ := Step(s, "v2", cl, nil, stable(cl), at(0))
	r := map[string]Report{"a": healthy(at(time.Second))}
	st, _ = Step(s, "v2", cl, r, st, at(30*time.Second))
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var stored State
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	next, _ := Step(s, "v2", cl, r, st, at(40*time.Second))
	fromStore, _ := Step(s, "v2", cl, r, stored, at(40*time.Second))
	if d := cmp.Diff(next, fromStore); d != "" {
		t.Fatalf("step from the stored state differs (-memory +stored):\n%s", d)
	}
	wantPhases(t, "stored", fromStore, map[string]Phase{"a": Succeeded, "b": Updating, "c": Pending})
}
