package agentapi

import (
	"strings"
	"testing"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/syncstate"
)

func upsert(key string) *agentv1.WorkUpsert { return &agentv1.WorkUpsert{WorkKey: key, Version: "1"} }

func keysOf(ws []*agentv1.WorkUpsert) string {
	var out []string
	for _, w := range ws {
		out = append(out, w.GetWorkKey())
	}
	return strings.Join(out, ",")
}

func changesOf(cs []WorkChange) string {
	var out []string
	for _, c := range cs {
		if c.Work == nil {
			out = append(out, "-"+c.Key)
			continue
		}
		out = append(out, "+"+c.Key)
	}
	return strings.Join(out, ",")
}

func TestLimit(t *testing.T) {
	tests := []struct {
		name        string
		max         int
		works       []string
		held        []string
		wantServed  string
		changes     []WorkChange
		wantPassed  string
		wantWithold int
	}{
		{"under the limit: everything", 3, []string{"b", "a"}, nil, "b,a",
			[]WorkChange{{Key: "c", Work: upsert("c")}}, "+c", 0},
		{"over: held first, then by key", 3, []string{"a", "b", "c", "d", "e"}, []string{"e"}, "e,a,b",
			nil, "", 2},
		{"a new work at the limit is withheld", 2, []string{"a", "b"}, nil, "a,b",
			[]WorkChange{{Key: "c", Work: upsert("c")}}, "", 1},
		{"a removal makes room: the first withheld by key", 2, []string{"a", "b", "d", "c"}, nil, "a,b",
			[]WorkChange{{Key: "a"}}, "-a,+c", 1},
		{"a withheld work removed: the removal passes, nothing served", 2, []string{"a", "b", "c"}, nil, "a,b",
			[]WorkChange{{Key: "c"}}, "-c", 0},
		{"a served work changes", 2, []string{"a", "b", "c"}, nil, "a,b",
			[]WorkChange{{Key: "b", Work: upsert("b")}}, "+b", 1},
		// One batch, applied to the session after filter: its own changes count.
		{"a batch adds two, the second over the limit", 2, []string{"a"}, nil, "a",
			[]WorkChange{{Key: "b", Work: upsert("b")}, {Key: "c", Work: upsert("c")}}, "+b", 1},
		{"a batch adds a work, then changes it", 2, []string{"a"}, nil, "a",
			[]WorkChange{{Key: "b", Work: upsert("b")}, {Key: "b", Work: upsert("b")}, {Key: "c", Work: upsert("c")}}, "+b,+b", 1},
		{"a batch removes a work, then adds one", 2, []string{"a", "b"}, nil, "a,b",
			[]WorkChange{{Key: "a"}, {Key: "c", Work: upsert("c")}, {Key: "d", Work: upsert("d")}}, "-a,+c", 1},
		{"a batch removes a work twice: one room", 2, []string{"a", "b"}, nil, "a,b",
			[]WorkChange{{Key: "a"}, {Key: "a"}, {Key: "c", Work: upsert("c")}, {Key: "d", Work: upsert("d")}}, "-a,-a,+c", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var works []*agentv1.WorkUpsert
			for _, k := range tt.works {
				works = append(works, upsert(k))
			}
			held := map[string]bool{}
			for _, k := range tt.held {
				held[k] = true
			}
			l, served := newLimit(tt.max, works, held)
			if got := keysOf(served); got != tt.wantServed {
				t.Errorf("newLimit served %s; want %s", got, tt.wantServed)
			}
			s := syncstate.New(syncstate.Input{Desired: served})
			if got := changesOf(l.filter(s, tt.changes)); got != tt.wantPassed || len(l.withheld) != tt.wantWithold {
				t.Errorf("filter = %s, %d withheld; want %s, %d", got, len(l.withheld), tt.wantPassed, tt.wantWithold)
			}
		})
	}
}
