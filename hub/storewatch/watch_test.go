package storewatch

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/storewatch/storewatchtest"
)

// t0 is the tables' start.
var t0 = time.Unix(1000, 0)

// step is one probe of a table: ok or not, started at start after t0 and
// lasting took; late, if set, is how much after it was due it started.
type step struct {
	ok          bool
	start, took time.Duration
	late        time.Duration
	waited      time.Duration
	want        transition
}

func (st step) probe() probe {
	start := t0.Add(st.start)
	return probe{ok: st.ok, due: start.Add(-st.late), start: start, end: start.Add(st.took), waited: st.waited}
}

func runSteps(t *testing.T, steps []step) {
	t.Helper()
	var s storeState
	for i, st := range steps {
		if got := s.observe(st.probe()); got != st.want {
			t.Errorf("step %d (ok %v at +%s for %s, late %s, waited %s) = %d; want %d", i, st.ok, st.start, st.took, st.late, st.waited, got, st.want)
		}
	}
}

func TestStoreStateHandsOverOnlyAfterTheGrace(t *testing.T) {
	g := storeLossGrace
	runSteps(t, []step{
		{ok: true, start: 0, took: time.Millisecond, want: storeSame},
		{ok: false, start: time.Second, took: storeProbeTimeout, want: storeSame},                              // a failed read alone moves nobody
		{ok: false, start: g - storeProbeTimeout, took: storeProbeTimeout - time.Millisecond, want: storeSame}, // just under the grace since the first failure
		{ok: false, start: g - time.Second, took: storeProbeTimeout, want: storeLost},                          // the grace is over: hand the agents over, once
		{ok: false, start: 2 * g, took: storeProbeTimeout, want: storeSame},
		{ok: true, start: 2*g + 3*time.Second, took: time.Millisecond, want: storeFound}, // back: serve again, once
		{ok: true, start: 2*g + 4*time.Second, took: time.Millisecond, want: storeSame},
		{ok: false, start: 3 * g, took: 10 * time.Millisecond, want: storeSame}, // a new grace from the first failure
		{ok: false, start: 4*g - time.Second, took: 10 * time.Millisecond, want: storeSame},
		{ok: false, start: 4 * g, took: 10 * time.Millisecond, want: storeLost}, // fast failures (etcd stopped) count as well
	})
}

// TestStoreStateDoesNotCountLateProbes: failed probes that the process ran
// late (started late, returned long after their timeout, or while its
// goroutines waited to run) are no evidence: a starved process never
// loses its store, however long it starves, and the evidence starts again
// after each of them.
func TestStoreStateDoesNotCountLateProbes(t *testing.T) {
	timeout, lateness := storeProbeTimeout, storeProbeLateness
	late := lateness + time.Millisecond
	t.Run("starved for a minute", func(t *testing.T) {
		var steps []step
		for i := range 30 {
			st := step{start: time.Duration(i) * 2 * time.Second, took: timeout}
			switch i % 3 {
			case 0:
				st.late = late // the timer fired late
			case 1:
				st.took += late // the deadline fired late
			case 2:
				st.waited = late // goroutines waited to run
			}
			if i == 0 {
				st.want = storeStarved // said once
			}
			steps = append(steps, st)
		}
		runSteps(t, steps)
	})
	t.Run("on time within the lateness", func(t *testing.T) {
		runSteps(t, []step{
			{start: 0, took: timeout + lateness, late: lateness, waited: lateness},
			{start: 4 * time.Second, took: timeout + lateness, late: lateness, waited: lateness},
			{start: 8 * time.Second, took: timeout + lateness, late: lateness, waited: lateness, want: storeLost},
		})
	})
	t.Run("a late probe restarts the evidence", func(t *testing.T) {
		runSteps(t, []step{
			{start: 0, took: timeout},
			{start: 4 * time.Second, took: timeout},
			{start: 6 * time.Second, took: timeout, waited: late, want: storeStarved},
			{start: 9 * time.Second, took: timeout},                                  // evidence from +9 s
			{start: 12 * time.Second, took: timeout},                                 // +14 s: 10 s since +0 s, but a late probe between
			{start: 16 * time.Second, took: timeout, want: storeSame},                // +18 s: 9 s of evidence
			{start: 18 * time.Second, took: timeout, want: storeLost},                // +20 s: 11 s
			{start: 20 * time.Second, took: timeout, late: late, want: storeStarved}, // said, but lost stays lost
			{start: 24 * time.Second, took: time.Millisecond, ok: true, want: storeFound},
		})
	})
	t.Run("a late success counts", func(t *testing.T) {
		runSteps(t, []step{
			{start: 0, took: timeout},
			{start: 6 * time.Second, took: timeout},
			{start: 10 * time.Second, took: timeout, want: storeLost},
			{start: 13 * time.Second, took: 5 * time.Second, late: late, waited: late, ok: true, want: storeFound},
		})
	})
}

// watchUntil runs a store watch with probe until it has probed n times
// and returns how many times it declared the store lost.
func watchUntil(t *testing.T, probe func(ctx context.Context) error, n int64) int64 {
	var probes, lost atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := Watch{Log: hclog.NewNullLogger(),
		Probe: func(ctx context.Context) error {
			if probes.Add(1) > n {
				cancel()
			}
			return probe(ctx)
		},
		Lost:  func(string) { lost.Add(1) },
		Found: func(context.Context) { t.Error("the store watch found a store that never answered") }}
	if err := w.Run(ctx); err != nil {
		t.Fatalf("store watch: %v", err)
	}
	return lost.Load()
}

// unanswered is a probe that etcd never answers.
func unanswered(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestStoreWatchHandsOverOnTimeFailures: reads that run into their
// timeout on time, for longer than the grace, lose the store, once.
func TestStoreWatchHandsOverOnTimeFailures(t *testing.T) {
	t.Parallel()
	probes := int64(storeLossGrace/storeProbeTimeout) + 2
	if lost := watchUntil(t, unanswered, probes); lost != 1 {
		t.Errorf("store lost %d times in %d unanswered probes (%s each); want once", lost, probes, storeProbeTimeout)
	}
}

// TestStoreWatchIgnoresProbesThatReturnLate: reads whose timeout this
// process saw a second late (it did not run when the timer fired: starved
// of CPU) never lose the store, for more than twice the grace.
func TestStoreWatchIgnoresProbesThatReturnLate(t *testing.T) {
	t.Parallel()
	late := func(ctx context.Context) error {
		err := unanswered(ctx)
		time.Sleep(time.Second)
		return err
	}
	probes := 2*int64(storeLossGrace/(storeProbeTimeout+time.Second)) + 2
	if lost := watchUntil(t, late, probes); lost != 0 {
		t.Errorf("store lost %d times in %d probes each seen a second after its timeout; want never (the process was starved, not the store lost)", lost, probes)
	}
}

func TestWaitQuantile(t *testing.T) {
	buckets := []float64{0, 0.001, 0.01, 0.1, 0.25, 1, 10}
	from := []uint64{5, 5, 5, 5, 5, 5}
	for _, tc := range []struct {
		name string
		to   []uint64
		q    float64
		want time.Duration
	}{
		{"none", []uint64{5, 5, 5, 5, 5, 5}, 0.9, 0},
		{"all fast", []uint64{105, 5, 5, 5, 5, 5}, 0.9, 0},
		{"few slow", []uint64{95, 5, 5, 5, 5, 15}, 0.9, 0},
		{"a tenth slow", []uint64{94, 5, 5, 5, 5, 16}, 0.9, time.Second},
		{"mostly waiting", []uint64{15, 5, 5, 5, 95, 5}, 0.9, 250 * time.Millisecond},
		{"one wait", []uint64{5, 5, 6, 5, 5, 5}, 0.9, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitQuantile(buckets, from, tc.to, tc.q); got != tc.want {
				t.Errorf("waitQuantile(%v, %v) = %s; want %s", tc.to, tc.q, got, tc.want)
			}
		})
	}
}

// TestSchedWaitsSeeAStarvedProcess: with one thread for Go code and 80
// goroutines that each work 5 ms, sleep 1 ms and want the thread again,
// as a hub's handlers do with too many agents for its CPU, a goroutine
// that becomes runnable waits for most of the others' work: schedWaits
// sees the process starved, though a timer in it fires on time.
func TestSchedWaitsSeeAStarvedProcess(t *testing.T) {
	w := newSchedWaits()
	w.reset()
	storewatchtest.Starve(80, 5*time.Millisecond, time.Second)
	if got := w.quantile(storeProbeWaitQuantile); got < storeProbeLateness {
		t.Errorf("goroutines' scheduling waits (quantile %v) with 80 goroutines working on one thread = %s; want at least %s", storeProbeWaitQuantile, got, storeProbeLateness)
	}
}
