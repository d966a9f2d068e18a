package rollout

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Cluster is one target cluster of the binding.
type Cluster struct {
	Name   string
	Labels map[string]string
	// Reachable is whether its lease is ready.
	Reachable bool
}

// Health is what the agent's interpreter said of the cluster's objects.
type Health int

// Health values.
const (
	HealthUnknown Health = iota
	Healthy
	Unhealthy
)

// Report is what the agents said of the rollout's revision on one
// cluster; reports of other revisions are not Reports (the zero value:
// nothing yet).
type Report struct {
	// Applied: every work of the cluster was acked applied at the revision.
	Applied bool
	// Failed is the reason an ack failed (apply error, conflict), if one did.
	Failed string
	Health Health
	// HealthySince is the observe time of the first Healthy report of the
	// current Healthy run.
	HealthySince time.Time
}

// Step advances a rollout of rev over clusters at now. It returns the next
// state and the earliest time at which time alone would change it (zero:
// only a report, a cluster change or a new revision will).
func Step(s *Strategy, rev string, clusters []Cluster, reports map[string]Report, prev State, now time.Time) (State, time.Time) {
	st := prev.clone()
	if st.Revision != rev || st.Phase == "" {
		restart(&st, rev)
	}
	byName := syncClusters(&st, clusters)
	if st.Phase == Complete {
		return st, time.Time{}
	}
	var w waker
	for _, name := range sortedNames(st.Clusters) {
		st.Clusters[name] = judge(s, rev, st.Clusters[name], byName[name], reports[name], now, &w)
	}
	waves := s.waves(clusters)
	failed, halt := failures(s, &st, waves, len(clusters))
	if !st.Held && halt == "" {
		admit(s, &st, waves, byName, reports, now, &w)
		failed, halt = failures(s, &st, waves, len(clusters))
	}
	conclude(&st, failed, halt)
	return st, w.at
}

// restart begins a rollout of rev: every cluster waits for its turn and
// keeps what it was last given; an operator's pause stays.
func restart(st *State, rev string) {
	st.Revision, st.Phase, st.Message, st.Tolerated = rev, Progressing, "", 0
	for name, c := range st.Clusters {
		st.Clusters[name] = ClusterState{Phase: Pending, Revision: c.Revision}
	}
}

// syncClusters keeps the states of the target clusters and adds new ones
// as Pending.
func syncClusters(st *State, clusters []Cluster) map[string]Cluster {
	byName := make(map[string]Cluster, len(clusters))
	for _, c := range clusters {
		byName[c.Name] = c
		if _, ok := st.Clusters[c.Name]; !ok {
			st.Clusters[c.Name] = ClusterState{Phase: Pending}
		}
	}
	for name := range st.Clusters {
		if _, ok := byName[name]; !ok {
			delete(st.Clusters, name)
		}
	}
	return byName
}

// judge moves a cluster that has the revision by what its agent reported.
func judge(s *Strategy, rev string, cs ClusterState, c Cluster, r Report, now time.Time, w *waker) ClusterState {
	if cs.Phase == Skipped && c.Reachable {
		cs.Late, cs.Message = true, "back after being skipped"
		if cs.Phase = Pending; cs.Revision == rev {
			cs.Phase, cs.Since = Updating, now
		}
	}
	if !cs.Phase.inFlight() {
		return cs
	}
	if !c.Reachable {
		cs.Phase, cs.Message = Skipped, "unreachable while updating"
		return cs
	}
	switch {
	case r.Failed != "":
		cs.Phase, cs.Message = Failed, r.Failed
		return cs
	case r.Applied && r.Health == Healthy:
		if soaked := r.HealthySince.Add(s.MinSuccess); now.Before(soaked) {
			cs.Phase, cs.Message = Soaking, ""
			w.add(soaked)
		} else {
			cs.Phase, cs.Message = Succeeded, ""
			return cs
		}
	case r.Health == Unhealthy:
		cs.Phase, cs.Message = Updating, "Unhealthy at the new revision"
	default:
		cs.Phase = Updating
	}
	if s.Deadline > 0 {
		if end := cs.Since.Add(s.Deadline); now.Before(end) {
			w.add(end)
		} else {
			cs.Phase, cs.Message = Failed, fmt.Sprintf("not Healthy within progressDeadline %s", s.Deadline)
		}
	}
	return cs
}

// admit gives the revision to the clusters whose turn it is: the first
// wave not done, up to its concurrency, within their windows.
func admit(s *Strategy, st *State, waves []wave, byName map[string]Cluster, reports map[string]Report, now time.Time, w *waker) {
	limit := s.concurrency(len(byName))
	for _, wv := range waves {
		inFlight := 0
		for _, name := range wv.clusters {
			if st.Clusters[name].Phase.inFlight() {
				inFlight++
			}
		}
		done := true
		for _, name := range wv.clusters {
			cs, c := st.Clusters[name], byName[name]
			if cs.Phase == Pending || cs.Phase == Waiting {
				cs = turn(s, st.Revision, cs, c, now, inFlight < limit, w)
				if cs.Phase.inFlight() {
					inFlight++
					cs = judge(s, st.Revision, cs, c, reports[name], now, w)
				}
			}
			if !cs.Phase.terminal() && (cs.Phase != Waiting || wv.mandatory) {
				done = false
			}
			st.Clusters[name] = cs
		}
		if !done {
			return
		}
	}
}

// turn is what happens to a cluster whose wave has come.
func turn(s *Strategy, rev string, cs ClusterState, c Cluster, now time.Time, room bool, w *waker) ClusterState {
	if !c.Reachable {
		cs.Phase, cs.Message = Skipped, "unreachable when its turn came"
		return cs
	}
	if open, next := s.window(c, now); !open {
		cs.Phase, cs.Message = Waiting, "outside its maintenance windows"
		w.add(next)
		return cs
	}
	if !room {
		cs.Phase, cs.Message = Pending, ""
		return cs
	}
	return ClusterState{Phase: Updating, Revision: rev, Since: now, Late: cs.Late}
}

// failures counts the failed clusters the operator has not resumed past
// and says why the rollout must halt, if it must.
func failures(s *Strategy, st *State, waves []wave, total int) (int, string) {
	var failed []string
	mandatory := false
	for _, wv := range waves {
		for _, name := range wv.clusters {
			if st.Clusters[name].Phase == Failed {
				failed = append(failed, name)
				mandatory = mandatory || wv.mandatory
			}
		}
	}
	n := len(failed) - st.Tolerated
	if n <= 0 {
		return len(failed), ""
	}
	sort.Strings(failed)
	switch max := s.maxFailures(total); {
	case mandatory:
		return len(failed), fmt.Sprintf("failed in a mandatory decision group: %s", strings.Join(failed, ", "))
	case n > max:
		return len(failed), fmt.Sprintf("%d clusters failed (%s), more than maxFailures %d", n, strings.Join(failed, ", "), max)
	}
	return len(failed), ""
}

// conclude sets the rollout's phase: paused, complete (every cluster done)
// or progressing.
func conclude(st *State, failed int, halt string) {
	switch {
	case halt != "":
		st.Phase, st.Message = Paused, halt
	case st.Held:
		st.Phase, st.Message = Paused, "paused by an operator"
	case allDone(st):
		st.Phase, st.Message, st.Stable = Complete, fmt.Sprintf("%d clusters failed", failed), st.Revision
		if failed == 0 {
			st.Message = ""
		}
		for name, c := range st.Clusters {
			c.Revision = ""
			st.Clusters[name] = c
		}
	default:
		st.Phase, st.Message = Progressing, ""
	}
}

func allDone(st *State) bool {
	for _, c := range st.Clusters {
		if !c.Phase.terminal() {
			return false
		}
	}
	return true
}

func sortedNames(m map[string]ClusterState) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// waker keeps the earliest time at which a deadline, soak or window falls.
type waker struct{ at time.Time }

func (w *waker) add(t time.Time) {
	if !t.IsZero() && (w.at.IsZero() || t.Before(w.at)) {
		w.at = t
	}
}
