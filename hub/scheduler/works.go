package scheduler

import workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"

// maxRounds bounds the reconcile rounds of one processing pass: a round
// runs again only when it freed room on a cluster that was full.
const maxRounds = 10

// worksOf are the clusters where b has a work: its targets, the targets of
// the bindings that require it as a dependency, and the clusters it is
// gracefully leaving (which keep their copy), as hub/render renders them.
func worksOf(b *workv1alpha1.ResourceBinding) map[string]bool {
	out := make(map[string]bool, len(b.Spec.Clusters))
	for _, t := range b.Spec.Clusters {
		out[t.Name] = true
	}
	for _, rb := range b.Spec.RequiredBy {
		for _, t := range rb.Clusters {
			out[t.Name] = true
		}
	}
	for _, t := range b.Spec.GracefulEvictionTasks {
		out[t.FromCluster] = true
	}
	return out
}

// setEntry caches e under key (nil: drops it) and keeps the works count
// per cluster. When a full cluster gets room, every binding is marked
// dirty: one the limit kept off it may go there now.
func (l *Loop) setEntry(key string, e *entry) {
	touched := map[string]bool{}
	if old, ok := l.bindings[key]; ok {
		for c := range worksOf(old.b) {
			touched[c] = true
			if l.works[c]--; l.works[c] <= 0 {
				delete(l.works, c)
			}
		}
	}
	delete(l.bindings, key)
	if e != nil {
		l.bindings[key] = e
		for c := range worksOf(e.b) {
			touched[c] = true
			l.works[c]++
		}
	}
	if l.cfg.MaxWorks > 0 {
		l.refreshFull(touched)
	}
}

// refreshFull updates whether each touched cluster is full.
func (l *Loop) refreshFull(touched map[string]bool) {
	freed := false
	for c := range touched {
		n := l.works[c]
		switch full := n >= l.cfg.MaxWorks; {
		case full && !l.full[c]:
			l.full[c] = true
			l.log.Warn("cluster reached the limit of works per cluster; no new workload goes there", "cluster", c, "works", n, "max_works", l.cfg.MaxWorks)
		case !full && l.full[c]:
			delete(l.full, c)
			freed = true
		}
	}
	if freed {
		for key := range l.bindings {
			l.dirty[key] = true
		}
	}
}
