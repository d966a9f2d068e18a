package agentapi

import (
	"sort"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// limit keeps what one stream serves within the cluster's works limit
// (Config.MaxWorks) without ever refusing the stream: a refusal would stop
// the cluster's heartbeats, and a cluster without heartbeats loses its
// lease. It serves at most max works, those the agent already holds first,
// then in key order, and withholds the others: a withheld work is neither
// sent nor deleted, and is served once a removal makes room. The scheduler
// places no new workload on a full cluster (hub/scheduler), so works are
// withheld only when dependencies or a lowered limit push a cluster over.
// limit is not safe for concurrent use; the stream's lock guards it.
type limit struct {
	max      int
	served   map[string]bool
	withheld map[string]*agentv1.WorkUpsert
}

// newLimit returns the limit of a stream whose cluster has works, for an
// agent that holds the keys of held, and the works to serve.
func newLimit(max int, works []*agentv1.WorkUpsert, held map[string]bool) (*limit, []*agentv1.WorkUpsert) {
	l := &limit{max: max, served: make(map[string]bool, min(len(works), max)), withheld: map[string]*agentv1.WorkUpsert{}}
	if len(works) <= max {
		for _, w := range works {
			l.served[w.GetWorkKey()] = true
		}
		return l, works
	}
	ordered := append([]*agentv1.WorkUpsert(nil), works...)
	sort.SliceStable(ordered, func(i, j int) bool {
		hi, hj := held[ordered[i].GetWorkKey()], held[ordered[j].GetWorkKey()]
		if hi != hj {
			return hi
		}
		return ordered[i].GetWorkKey() < ordered[j].GetWorkKey()
	})
	for i, w := range ordered {
		if i < max {
			l.served[w.GetWorkKey()] = true
			continue
		}
		l.withheld[w.GetWorkKey()] = w
	}
	return l, ordered[:max]
}

// filter returns the changes to pass on: changes of served works and
// removals as they are, new works while there is room, and withheld works
// (in key order) once removals make room.
func (l *limit) filter(changes []WorkChange) []WorkChange {
	out := make([]WorkChange, 0, len(changes))
	for _, c := range changes {
		switch {
		case c.Work == nil:
			delete(l.served, c.Key)
			delete(l.withheld, c.Key)
			out = append(out, c)
		case l.served[c.Key]:
			out = append(out, c)
		case len(l.served) < l.max:
			delete(l.withheld, c.Key)
			l.served[c.Key] = true
			out = append(out, c)
		default:
			l.withheld[c.Key] = c.Work
		}
	}
	return append(out, l.promote()...)
}

// promote serves withheld works, in key order, while there is room.
func (l *limit) promote() []WorkChange {
	room := l.max - len(l.served)
	if room <= 0 || len(l.withheld) == 0 {
		return nil
	}
	keys := make([]string, 0, len(l.withheld))
	for k := range l.withheld {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []WorkChange
	for _, k := range keys[:min(room, len(keys))] {
		out = append(out, WorkChange{Key: k, Work: l.withheld[k]})
		l.served[k] = true
		delete(l.withheld, k)
	}
	return out
}

// heldKeys are the work keys the agent says it holds.
func heldKeys(hello *agentv1.Hello) map[string]bool {
	out := make(map[string]bool, len(hello.GetHeldWorks()))
	for _, h := range hello.GetHeldWorks() {
		out[h.GetWorkKey()] = true
	}
	return out
}
