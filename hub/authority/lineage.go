package authority

import (
	"context"
	"fmt"
)

// Lineage is what an agent's Hello says of the store its works came from.
type Lineage struct {
	Cluster string
	// HeldWorks is how many works it holds from this hub identity.
	HeldWorks int
	// Epoch is the store epoch it was last welcomed with; Revision the
	// highest store revision it has seen (both empty from an agent that
	// predates them).
	Epoch    string
	Revision int64
}

// behind returns why the store is behind what l saw ("" when it is not):
// the agent saw a revision the store has not reached, so the store went
// back (a restore), whatever its epoch and checkpoints say. Compared
// with the store's revision at this start when l is the cluster's first
// Hello since (Options.Alone: no other replica could have shown it
// newer), else with the store's current revision. Another epoch is the
// agent's own concern (it holds this hub not authoritative for it), not a
// sign that this store lost data.
func (a *Authority) behind(ctx context.Context, l Lineage) (string, error) {
	// Every Hello counts, also one with nothing of this store: whatever
	// the agent reports after it, it may have seen from this hub since its
	// start.
	first := a.firstHello(l.Cluster)
	if l.Revision == 0 || l.Epoch == "" || l.Epoch != a.Epoch() {
		return "", nil
	}
	if first && a.alone && l.Revision > a.started {
		return fmt.Sprintf("the agent of cluster %q saw store revision %d, but the store was at revision %d when this hub started: "+
			"the store (data directory) was restored from an older copy", l.Cluster, l.Revision, a.started), nil
	}
	if l.Revision <= a.seen.Load() {
		return "", nil
	}
	rev, err := a.st.Revision(ctx)
	if err != nil {
		return "", err
	}
	a.raiseSeen(rev)
	if l.Revision > rev {
		return fmt.Sprintf("the agent of cluster %q saw store revision %d, which the store (now at revision %d) has not reached: "+
			"the store was restored from an older snapshot", l.Cluster, l.Revision, rev), nil
	}
	return "", nil
}

// firstHello reports whether this is cluster's first Hello since start,
// and records that it was seen.
func (a *Authority) firstHello(cluster string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hellos[cluster] {
		return false
	}
	a.hellos[cluster] = true
	return true
}

// raiseSeen records that the store has reached rev.
func (a *Authority) raiseSeen(rev int64) {
	for {
		cur := a.seen.Load()
		if rev <= cur || a.seen.CompareAndSwap(cur, rev) {
			return
		}
	}
}
