package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// HubSource is the source name of events from the hub's watch; member
// events carry their cluster's name.
const HubSource = "hub"

// Milestone is one point of a phase: the moment cond has held, once, for
// Want objects.
type Milestone struct {
	Name string
	// Hub: counted on the hub's templates, else on the members' copies.
	Hub bool
	// Namespace the objects are in.
	Namespace string
	Want      int
	cond      func(d *appsv1.Deployment, deleted bool) bool
	at        map[string]time.Time // "source/name" → first time cond held
}

// Tracker turns the watches' events into milestones. The watches run
// from before t0 on; Begin starts a phase with its milestones.
type Tracker struct {
	mu       sync.Mutex
	t0       time.Time
	phase    []*Milestone
	progress chan struct{}                 // receives (without blocking) when a milestone gains an object
	last     map[string]*appsv1.Deployment // "source/namespace/name" → its latest state, for errors
	lastAt   map[string]time.Time          // … and when it was seen
}

// NewTracker returns a tracker with no phase.
func NewTracker() *Tracker {
	return &Tracker{progress: make(chan struct{}, 1), last: map[string]*appsv1.Deployment{}, lastAt: map[string]time.Time{}}
}

// Begin starts a phase: t0 is now, and from now on events count for ms.
func (tr *Tracker) Begin(ms []*Milestone) time.Time {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, m := range ms {
		m.at = make(map[string]time.Time, m.Want)
	}
	tr.phase, tr.t0 = ms, time.Now()
	return tr.t0
}

// wantsHub reports whether the phase has milestones on the hub.
func (tr *Tracker) wantsHub() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, m := range tr.phase {
		if m.Hub && len(m.at) < m.Want {
			return true
		}
	}
	return false
}

// Observe records an event of a watch: d as it is now (deleted: its last
// state) in source (HubSource or a cluster), seen at at.
func (tr *Tracker) Observe(source string, d *appsv1.Deployment, deleted bool, at time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	key := source + "/" + d.Name
	tr.last[source+"/"+d.Namespace+"/"+d.Name] = d
	tr.lastAt[source+"/"+d.Namespace+"/"+d.Name] = at
	gained := false
	for _, m := range tr.phase {
		if m.Hub != (source == HubSource) || m.Namespace != d.Namespace {
			continue
		}
		if _, ok := m.at[key]; ok || !m.cond(d, deleted) {
			continue
		}
		m.at[key] = at
		gained = true
	}
	if gained {
		select {
		case tr.progress <- struct{}{}:
		default:
		}
	}
}

// Wait returns once every milestone of the phase has its Want objects,
// or with an error saying how far each got when ctx ends.
func (tr *Tracker) Wait(ctx context.Context) error {
	for {
		left := tr.pending()
		if left == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("milestones not reached: %s: %w", left, ctx.Err())
		case <-tr.progress:
		}
	}
}

// pending says which milestones lack objects, "" when none.
func (tr *Tracker) pending() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var left []string
	for _, m := range tr.phase {
		if len(m.at) < m.Want {
			left = append(left, fmt.Sprintf("%s %d/%d%s", m.Name, len(m.at), m.Want, tr.example(m)))
		}
	}
	return strings.Join(left, ", ")
}

// example describes one object m still waits for, as last seen.
func (tr *Tracker) example(m *Milestone) string {
	for key, d := range tr.last {
		if tr.lastAt[key].Before(tr.t0) && m.Name != MGone {
			continue // not seen in this phase: a former copy of the name
		}
		src, rest, _ := strings.Cut(key, "/")
		if m.Hub != (src == HubSource) || d.Namespace != m.Namespace {
			continue
		}
		if _, ok := m.at[src+"/"+d.Name]; ok {
			continue
		}
		st := d.Status
		return fmt.Sprintf(" (e.g. %s in %s: generation %d, image %s, spec.replicas %d; status: observed %d, replicas %d, updated %d, ready %d, available %d)",
			rest, src, d.Generation, image(d), replicas(d), st.ObservedGeneration, st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas)
	}
	return ""
}

// Reached is a milestone's outcome in one phase.
type Reached struct {
	Name string
	// After is when the last of its objects got there, from t0.
	After time.Duration
	// PerSource lists each source's objects' times from t0, sorted.
	PerSource map[string][]time.Duration
}

// Results returns the phase's milestones as reached so far.
func (tr *Tracker) Results() []Reached {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := make([]Reached, 0, len(tr.phase))
	for _, m := range tr.phase {
		r := Reached{Name: m.Name, PerSource: map[string][]time.Duration{}}
		for key, at := range m.at {
			d := at.Sub(tr.t0)
			r.After = max(r.After, d)
			src := key[:strings.IndexByte(key, '/')]
			r.PerSource[src] = append(r.PerSource[src], d)
		}
		for _, ds := range r.PerSource {
			slices.Sort(ds)
		}
		out = append(out, r)
	}
	return out
}

// Milestone names, as the tables show them.
const (
	MExist      = "all member copies exist"
	MReady      = "all member copies ready"
	MAggregated = "all templates aggregated ready"
	MNewImage   = "all member copies carry the new image"
	MRolledOut  = "all member rollouts complete"
	MAggRolled  = "all templates aggregated rolled out"
	MGone       = "all member copies gone"
)

// createMilestones are the create phase's: every copy exists with its
// replicas, is ready, and (through the hub) every template shows the
// aggregated ready count.
func createMilestones(ns string, v Variant, deployments, clusters int, hub bool) []*Milestone {
	per, total := v.PerCluster(clusters), v.Aggregated(clusters)
	ms := []*Milestone{
		{Name: MExist, Namespace: ns, Want: deployments * clusters, cond: func(d *appsv1.Deployment, deleted bool) bool {
			return !deleted && replicas(d) == per
		}},
		{Name: MReady, Namespace: ns, Want: deployments * clusters, cond: func(d *appsv1.Deployment, deleted bool) bool {
			return !deleted && replicas(d) == per && d.Status.ReadyReplicas == per
		}},
	}
	if hub {
		ms = append(ms, &Milestone{Name: MAggregated, Hub: true, Namespace: ns, Want: deployments, cond: func(d *appsv1.Deployment, deleted bool) bool {
			return !deleted && d.Status.ReadyReplicas == total && d.Status.Replicas == total
		}})
	}
	return ms
}

// updateMilestones are the update phase's: every copy carries the new
// image, every member rollout is complete, and every template shows it
// rolled out (updated = ready = replicas, generation observed).
func updateMilestones(ns string, v Variant, deployments, clusters int, hub bool) []*Milestone {
	per, total := v.PerCluster(clusters), v.Aggregated(clusters)
	ms := []*Milestone{
		{Name: MNewImage, Namespace: ns, Want: deployments * clusters, cond: func(d *appsv1.Deployment, deleted bool) bool {
			return !deleted && image(d) == ImageNew
		}},
		{Name: MRolledOut, Namespace: ns, Want: deployments * clusters, cond: func(d *appsv1.Deployment, deleted bool) bool {
			return !deleted && image(d) == ImageNew && rolled(d, per)
		}},
	}
	if hub {
		ms = append(ms, &Milestone{Name: MAggRolled, Hub: true, Namespace: ns, Want: deployments, cond: func(d *appsv1.Deployment, deleted bool) bool {
			return !deleted && image(d) == ImageNew && rolled(d, total)
		}})
	}
	return ms
}

// deleteMilestones is the delete phase's: every member copy is gone.
func deleteMilestones(ns string, deployments, clusters int) []*Milestone {
	return []*Milestone{{Name: MGone, Namespace: ns, Want: deployments * clusters, cond: func(_ *appsv1.Deployment, deleted bool) bool {
		return deleted
	}}}
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// rolled: n replicas, all updated, ready and available, and no old ones
// left, with the current generation observed.
func rolled(d *appsv1.Deployment, n int32) bool {
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.Replicas == n &&
		s.UpdatedReplicas == n && s.ReadyReplicas == n && s.AvailableReplicas == n
}
