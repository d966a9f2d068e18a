package render

import (
	"slices"

	"github.com/tetherproj/tether/hub/pipeline/work"
)

// reach is where a work key that did not render may be held: some
// clusters, or any cluster when nothing says which (its binding is
// missing or does not decode). Unknown means keep: Gone says Keep for
// the key on these clusters, and Authoritative is false for them, until
// the key renders or is positively gone.
type reach struct {
	clusters clusterSet
	any      bool
}

// has reports whether the key may be held by cluster.
func (rc *reach) has(cluster string) bool {
	return rc.any || rc.clusters.has(cluster)
}

// unsureOf returns the reach of key, which did not render: the clusters
// holding it, those it last vouched for and those its binding targets
// now, less drop (clusters its decoded binding positively no longer
// places it on). Only Run's goroutine calls it.
func (r *Renderer) unsureOf(key string, vouch map[string]bool, drop []string) *reach {
	b := r.in.bindings[key]
	if b == nil {
		return &reach{any: true}
	}
	set := map[string]bool{}
	for _, c := range r.state.placed(key) {
		set[c] = true
	}
	if ref := r.state.refs[key]; ref != nil {
		for _, c := range ref.vouch {
			set[c] = true
		}
	}
	for _, tc := range work.Targets(b) {
		set[tc.Name] = true
	}
	for c := range vouch {
		set[c] = true
	}
	for _, c := range drop {
		delete(set, c)
	}
	return &reach{clusters: newClusterSet(set)}
}

// setUnsure records the reach of key after a plan: rc nil forgets it (the
// key rendered, or is positively gone). mu held.
func (s *state) setUnsure(key string, rc *reach) {
	if old, ok := s.unsure[key]; ok {
		s.countUnsure(old, -1)
		delete(s.unsure, key)
	}
	if rc == nil {
		return
	}
	s.unsure[key] = rc
	s.countUnsure(rc, 1)
}

// countUnsure adds d to the counts of unsure keys of rc's clusters. mu
// held.
func (s *state) countUnsure(rc *reach, d int) {
	if rc.any {
		s.unsureAny += d
		return
	}
	for _, c := range rc.clusters {
		if s.unsureOn[c] += d; s.unsureOn[c] == 0 {
			delete(s.unsureOn, c)
		}
	}
}

// unsureFor reports whether some key that did not render may be held by
// cluster. mu held.
func (s *state) unsureFor(cluster string) bool {
	return s.unsureAny > 0 || s.unsureOn[cluster] > 0
}

// someUnsure returns up to n of the keys that did not render, sorted, for
// a log line. mu held.
func (s *state) someUnsure(n int) []string {
	keys := make([]string, 0, min(n, len(s.unsure)))
	for k := range s.unsure {
		if len(keys) == n {
			break
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
