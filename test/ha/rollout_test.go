package ha_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tetherproj/tether/test/manifests"
)

// rolledName is the Deployment the rollout scenario rolls out.
const rolledName = "ha-rolled"

// rolloutSoak is the scenario's minSuccessTime: long enough that the
// leader, killed while the first cluster soaks, is replaced (about 15 s on
// a loaded machine) before the second cluster's turn would come.
const rolloutSoak = 20 * time.Second

// rolloutLimit bounds the wait for the whole rollout: two clusters, each
// applied and soaked, a leader change and a loaded machine.
const rolloutLimit = 4 * time.Minute

// rolledYAML is rolledName with image on clusters, one at a time, soaked
// rolloutSoak, with 3 minutes each to get there.
func rolledYAML(clusters []string, image string) string {
	return manifests.Rolled(rolledName, image, clusters, rolloutSoak, 3*time.Minute)
}

// leaderKilledMidRollout rolls a new image out one cluster at a time and
// kills the leader (kill -9) as soon as the first cluster has it, while
// it soaks. The new leader resumes the rollout at the same step: the
// second cluster takes the image only after the first was ready with it
// for the soak, each member's Deployment is written once (its generation
// moves by one: nothing applied twice, nothing rolled back) and keeps its
// UID (nothing deleted).
func leaderKilledMidRollout(t *testing.T) {
	x := newFixture(t, options{})
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	names := x.clusterNames()
	x.apply(ctx, rolledYAML(names, "nginx:1.27"))
	s := x.sampleRolled(ctx, "nginx:1.28")
	if err := s.waitAll(ctx, "nginx:1.27", rolloutLimit); err != nil {
		t.Fatalf("first rollout: %v", err)
	}
	before := s.last()
	x.apply(ctx, rolledYAML(names, "nginx:1.28"))
	first, err := s.waitFirst(ctx, "nginx:1.28", rolloutLimit)
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := x.leaderIndex(ctx)
	if err != nil || old < 0 {
		t.Fatalf("leader: hub-%d, %v", old, err)
	}
	killedAt := time.Now()
	x.hubs[old].Kill()
	_, acting, next := x.measureLeaderChange(ctx, killedAt, old)
	if err := s.waitAll(ctx, "nginx:1.28", rolloutLimit); err != nil {
		t.Fatalf("after the leader change: %v", err)
	}
	s.stop()
	after := s.last()
	second := names[0]
	if second == first {
		second = names[1]
	}
	gap := s.firstWith(second, "nginx:1.28").Sub(s.readyWith(first, "nginx:1.28"))
	t.Logf("FIGURES %s: first=%s second=%s new_leader=hub-%d leader_acting_after=%s second_after_first_ready=%s (soak %s) samples=%d",
		t.Name(), first, second, next, fig(acting), fig(gap), rolloutSoak, s.count())
	if gap < rolloutSoak-time.Second {
		t.Errorf("%s took nginx:1.28 %s after %s was ready with it; want at least the soak, %s: the new leader did not resume at the same step", second, fig(gap), first, rolloutSoak)
	}
	for _, c := range names {
		if b, a := before[c], after[c]; a.uid != b.uid || a.generation != b.generation+1 {
			t.Errorf("%s in %s: uid %s → %s, generation %d → %d; want the same uid, written once (generation +1)", rolledName, c, b.uid, a.uid, b.generation, a.generation)
		}
	}
	for _, p := range s.problems() {
		t.Error(p)
	}
}

// rolledState is one sample of rolledName in a member.
type rolledState struct {
	image      string
	uid        string
	generation int64
	ready      bool
}

// rolledSampler reads rolledName in every member every 200 ms, from the
// members' API servers directly, and remembers when each cluster first
// had each image and first was ready with it, and any sample where the
// object was gone, re-created or went back from the new image.
type rolledSampler struct {
	x      *fixture
	newer  string
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	cur   map[string]rolledState
	seen  map[string]time.Time // cluster + "|" + image → first seen
	ready map[string]time.Time // cluster + "|" + image → first ready
	errs  []string
	n     int
}

// sampleRolled starts sampling; newer is the image a cluster must never
// leave once it had it.
func (x *fixture) sampleRolled(ctx context.Context, newer string) *rolledSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &rolledSampler{x: x, newer: newer, cancel: cancel, done: make(chan struct{}),
		cur: map[string]rolledState{}, seen: map[string]time.Time{}, ready: map[string]time.Time{}}
	go s.run(ctx)
	x.t.Cleanup(s.stop)
	return s
}

func (s *rolledSampler) run(ctx context.Context) {
	defer close(s.done)
	for ctx.Err() == nil {
		out := map[string]rolledState{}
		for _, c := range s.x.kit.Clusters {
			d, err := c.Dynamic().Resource(deployments).Namespace("default").Get(ctx, rolledName, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				out[c.Name] = rolledState{}
			case err != nil:
				continue // a slow read: the next sample
			default:
				out[c.Name] = stateOf(d)
			}
		}
		s.record(time.Now(), out)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stateOf is a member's Deployment as a sample.
func stateOf(d *unstructured.Unstructured) rolledState {
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	st := rolledState{uid: string(d.GetUID()), generation: d.GetGeneration()}
	if len(cs) > 0 {
		st.image, _, _ = unstructured.NestedString(cs[0].(map[string]any), "image")
	}
	ready, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
	observed, _, _ := unstructured.NestedInt64(d.Object, "status", "observedGeneration")
	st.ready = ready >= 1 && observed == d.GetGeneration()
	return st
}

// record keeps one sample: first times, and problems against the one
// before.
func (s *rolledSampler) record(at time.Time, out map[string]rolledState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	for c, st := range out {
		prev, had := s.cur[c]
		switch {
		case had && prev.uid != "" && st.uid == "":
			s.errs = append(s.errs, fmt.Sprintf("%s deleted from %s at %s", rolledName, c, at.Format(time.RFC3339Nano)))
		case had && prev.uid != "" && st.uid != prev.uid:
			s.errs = append(s.errs, fmt.Sprintf("%s re-created in %s at %s (uid %s → %s)", rolledName, c, at.Format(time.RFC3339Nano), prev.uid, st.uid))
		case had && prev.image == s.newer && st.image != s.newer && st.uid != "":
			s.errs = append(s.errs, fmt.Sprintf("%s in %s went back from %s to %s at %s", rolledName, c, s.newer, st.image, at.Format(time.RFC3339Nano)))
		}
		s.cur[c] = st
		if st.image == "" {
			continue
		}
		if _, ok := s.seen[c+"|"+st.image]; !ok {
			s.seen[c+"|"+st.image] = at
		}
		if _, ok := s.ready[c+"|"+st.image]; !ok && st.ready {
			s.ready[c+"|"+st.image] = at
		}
	}
}

// snapshot runs f on the sampler's state, between samples.
func (s *rolledSampler) snapshot(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// waitAll waits until every member has image, ready.
func (s *rolledSampler) waitAll(ctx context.Context, image string, limit time.Duration) error {
	return s.wait(ctx, limit, func() (bool, string) {
		for _, c := range s.x.kit.Clusters {
			if st := s.cur[c.Name]; st.image != image || !st.ready {
				return false, fmt.Sprintf("%s in %s: %+v; want %s ready everywhere", rolledName, c.Name, st, image)
			}
		}
		return true, ""
	})
}

// waitFirst waits until one member has image and returns it.
func (s *rolledSampler) waitFirst(ctx context.Context, image string, limit time.Duration) (first string, err error) {
	err = s.wait(ctx, limit, func() (bool, string) {
		for _, c := range s.x.kit.Clusters {
			if s.cur[c.Name].image == image {
				first = c.Name
				return true, ""
			}
		}
		return false, fmt.Sprintf("no member has %s", image)
	})
	return first, err
}

func (s *rolledSampler) wait(ctx context.Context, limit time.Duration, done func() (bool, string)) error {
	deadline := time.Now().Add(limit)
	for {
		var ok bool
		var why string
		s.snapshot(func() { ok, why = done() })
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %s", limit, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *rolledSampler) stop() {
	s.cancel()
	<-s.done
}

// last is the last sample of every member.
func (s *rolledSampler) last() map[string]rolledState {
	out := map[string]rolledState{}
	s.snapshot(func() {
		for c, st := range s.cur {
			out[c] = st
		}
	})
	return out
}

func (s *rolledSampler) firstWith(cluster, image string) (at time.Time) {
	s.snapshot(func() { at = s.seen[cluster+"|"+image] })
	return at
}

func (s *rolledSampler) readyWith(cluster, image string) (at time.Time) {
	s.snapshot(func() { at = s.ready[cluster+"|"+image] })
	return at
}

func (s *rolledSampler) count() (n int) {
	s.snapshot(func() { n = s.n })
	return n
}

func (s *rolledSampler) problems() (out []string) {
	s.snapshot(func() { out = append(out, s.errs...) })
	return out
}
