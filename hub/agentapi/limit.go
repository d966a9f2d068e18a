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
// sent nor deleted (one the agent holds is in SyncDone's key set:
// withheldKeys), and is served once a removal makes room. The scheduler
// places no new workload on a full cluster (hub/scheduler), so works are
// withheld only when dependencies or a lowered limit push a cluster over.
// limit is not safe for concurrent use; the stream's lock guards it.
type limit struct {
	max      int
	withheld map[string]*agentv1.WorkUpsert
}

// servedSet is what a stream serves: its session's desired works
// (syncstate.Session). The limit keeps no set of its own: a hub of 1,000
// agents with 1,000 works each would hold a million more keys.
type servedSet interface {
	Has(key string) bool
	Works() int
}

// newLimit returns the limit of a stream whose cluster has works, for an
// agent that holds the keys of held, and the works to serve.
func newLimit(max int, works []*agentv1.WorkUpsert, held map[string]bool) (*limit, []*agentv1.WorkUpsert) {
	l := &limit{max: max, withheld: map[string]*agentv1.WorkUpsert{}}
	if len(works) <= max {
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
	for _, w := range ordered[max:] {
		l.withheld[w.GetWorkKey()] = w
	}
	return l, ordered[:max]
}

// withheldKeys returns the keys of the works withheld now, for the
// session's SyncDone (syncstate.Input.Withheld): those the agent holds
// stay in its key set, so that it keeps them.
func (l *limit) withheldKeys() []string {
	keys := make([]string, 0, len(l.withheld))
	for k := range l.withheld {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// filter returns the changes to pass on to served, which has not seen
// them yet: changes of served works and removals as they are, new works
// while there is room, and withheld works (in key order) once removals
// make room.
func (l *limit) filter(served servedSet, changes []WorkChange) []WorkChange {
	out := make([]WorkChange, 0, len(changes))
	b := batch{served: served, n: served.Works()}
	for _, c := range changes {
		switch {
		case c.Work == nil:
			b.remove(c.Key)
			delete(l.withheld, c.Key)
			out = append(out, c)
		case b.has(c.Key):
			out = append(out, c)
		case b.n < l.max:
			delete(l.withheld, c.Key)
			b.add(c.Key)
			out = append(out, c)
		default:
			l.withheld[c.Key] = c.Work
		}
	}
	return append(out, l.promote(l.max-b.n)...)
}

// batch is what a stream serves once a batch of changes passed so far is
// applied: the served set, with the batch's own additions and removals
// over it, and their count.
type batch struct {
	served  servedSet
	changed map[string]bool // key → served after the batch's changes so far
	n       int
}

// has reports whether key is served once the batch's changes so far are.
func (b *batch) has(key string) bool {
	if v, ok := b.changed[key]; ok {
		return v
	}
	return b.served.Has(key)
}

// add serves key from this change on; remove stops serving it.
func (b *batch) add(key string) { b.set(key, true) }

func (b *batch) remove(key string) { b.set(key, false) }

// set records whether key is served after this change, counting it.
func (b *batch) set(key string, served bool) {
	if b.has(key) == served {
		return
	}
	if served {
		b.n++
	} else {
		b.n--
	}
	if b.changed == nil {
		b.changed = map[string]bool{}
	}
	b.changed[key] = served
}

// promote serves up to room withheld works, in key order.
func (l *limit) promote(room int) []WorkChange {
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
