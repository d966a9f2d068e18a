package rollout

import (
	"encoding/json"
	"testing"
	"time"
)

// TestUnwatched: only clusters in flight and the Healthy sightings move
// by the gap; done and waiting clusters keep their times.
func TestUnwatched(t *testing.T) {
	gap := time.Minute
	r := Record{State: State{Clusters: map[string]ClusterState{
		"updating": {Phase: Updating, Since: t0}, "soaking": {Phase: Soaking, Since: t0},
		"done": {Phase: Succeeded, Since: t0}, "pending": {Phase: Pending}}},
		Healthy: map[string]Seen{"soaking": {Version: "v", Since: t0}}}
	r.Unwatched(gap)
	for name, want := range map[string]time.Time{"updating": t0.Add(gap), "soaking": t0.Add(gap), "done": t0, "pending": {}} {
		if got := r.State.Clusters[name].Since; !got.Equal(want) {
			t.Errorf("Unwatched(%s): %s since %v; want %v", gap, name, got, want)
		}
	}
	if got := r.Healthy["soaking"].Since; !got.Equal(t0.Add(gap)) {
		t.Errorf("Unwatched(%s): Healthy since %v; want %v", gap, got, t0.Add(gap))
	}
}

// TestRecordHistory: Remember keeps MaxHistory contents, newest first, a
// revision once; Previous is the one before the newest; DecodeRecord
// refuses a record without a phase.
func TestRecordHistory(t *testing.T) {
	var r Record
	if _, ok := r.Previous(); ok {
		t.Errorf("Previous() of an empty history = ok; want none")
	}
	for _, rev := range []string{"r1", "r2", "r3", "r4", "r5", "r5"} {
		r.Remember(rev, json.RawMessage(`{"rev":"`+rev+`"}`))
	}
	var got []string
	for _, e := range r.History {
		got = append(got, e.Revision)
	}
	if want := []string{"r5", "r4", "r3", "r2"}; len(got) != len(want) || got[0] != want[0] || got[3] != want[3] {
		t.Errorf("history = %v; want %v", got, want)
	}
	if p, ok := r.Previous(); !ok || p.Revision != "r4" {
		t.Errorf("Previous() = %v, %v; want r4", p.Revision, ok)
	}
	r.Remember("r3", json.RawMessage(`{}`)) // an undo back to r3
	if r.History[0].Revision != "r3" || r.History[1].Revision != "r5" || len(r.History) != 4 {
		t.Errorf("history after returning to r3 = %+v; want r3 first, then r5", r.History)
	}
	if _, err := DecodeRecord([]byte(`{"state":{}}`)); err == nil {
		t.Errorf("DecodeRecord(no phase) = nil error; want refused")
	}
}
