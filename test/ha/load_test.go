package ha_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/proc"
)

// applyTimeout bounds one apply through one replica: a dead replica's
// call fails at once, a stopped one's at this bound.
const applyTimeout = 2 * time.Second

// applyGiveUp is how long the load tries one apply on every replica in
// turn before it counts it failed: longer than a leader change.
const applyGiveUp = time.Minute

// applyPause is the pause between two applies, and between two rounds of
// tries while no replica answers: it spreads the load over the fault.
const applyPause = 20 * time.Millisecond

// load applies ConfigMaps 0 … n-1 (loadYAML) one after the other through
// the client API, each through the next replica in turn, moving on to the
// others when one fails, and records which were acknowledged (committed).
type load struct {
	x     *fixture
	n     int
	acked atomic.Int64 // applies acknowledged so far
	done  chan struct{}
	halt  chan struct{} // closed by stop: no apply starts after it
	once  sync.Once

	mu      sync.Mutex // guards the fields below
	ok      []bool     // by number: acknowledged
	retries int        // applies that failed on a replica and were tried on another
	failed  int        // applies no replica acknowledged within applyGiveUp
}

// startLoad starts the applies in the background; wait waits for them.
func (x *fixture) startLoad(ctx context.Context, n int) *load {
	l := &load{x: x, n: n, done: make(chan struct{}), halt: make(chan struct{}), ok: make([]bool, n)}
	go l.run(ctx)
	return l
}

func (l *load) run(ctx context.Context) {
	defer close(l.done)
	for i := range l.n {
		select {
		case <-ctx.Done():
			return
		case <-l.halt:
			return
		default:
		}
		ok := l.applyOne(ctx, i)
		l.mu.Lock()
		l.ok[i] = ok
		if !ok {
			l.failed++
		}
		l.mu.Unlock()
		if ok {
			l.acked.Add(1)
		}
		time.Sleep(applyPause)
	}
}

// applyOne applies ConfigMap i through replica i mod n, then the others,
// until one acknowledges it or applyGiveUp passes.
func (l *load) applyOne(ctx context.Context, i int) bool {
	deadline := time.Now().Add(applyGiveUp)
	for try := 0; time.Now().Before(deadline) && ctx.Err() == nil; try++ {
		c := l.x.clients[(i+try)%len(l.x.clients)]
		cctx, cancel := context.WithTimeout(ctx, applyTimeout)
		_, err := c.Apply(cctx, []byte(loadYAML(i)))
		cancel()
		if err == nil {
			return true
		}
		l.mu.Lock()
		l.retries++
		l.mu.Unlock()
		if (try+1)%len(l.x.clients) == 0 {
			time.Sleep(applyPause)
		}
	}
	return false
}

// waitAcked waits until n applies are acknowledged.
func (l *load) waitAcked(ctx context.Context, n int64) error {
	return proc.Poll(ctx, pollFine, func(context.Context) error {
		if got := l.acked.Load(); got < n {
			select {
			case <-l.done:
				return proc.Permanent(fmt.Errorf("load ended with %d applies acknowledged; want %d", got, n))
			default:
			}
			return fmt.Errorf("%d applies acknowledged", got)
		}
		return nil
	})
}

// stop ends the load after the apply under way.
func (l *load) stop() { l.once.Do(func() { close(l.halt) }) }

// wait waits for the last apply.
func (l *load) wait(ctx context.Context) error {
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("load not finished: %w", ctx.Err())
	}
}

// ackedNames are the names of the acknowledged ConfigMaps.
func (l *load) ackedNames() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ackedNamesLocked()
}

// counts returns the applies acknowledged, retried and failed.
func (l *load) counts() (acked, retries, failed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ackedNamesLocked()), l.retries, l.failed
}

func (l *load) ackedNamesLocked() []string {
	var out []string
	for i, ok := range l.ok {
		if ok {
			out = append(out, loadName(i))
		}
	}
	return out
}

// lostOnHub returns the acknowledged ConfigMaps a live replica does not
// have (asked through every live replica in turn until one answers).
func (x *fixture) lostOnHub(ctx context.Context, names []string) ([]string, error) {
	var lost []string
	for _, name := range names {
		ref := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: name}
		found, err := x.getAny(ctx, ref)
		if err != nil {
			return nil, err
		}
		if !found {
			lost = append(lost, name)
		}
	}
	return lost, nil
}

// getAny asks the live replicas for ref until one answers.
func (x *fixture) getAny(ctx context.Context, ref *hubv1.ObjectRef) (bool, error) {
	var errs []error
	for _, c := range x.live() {
		cctx, cancel := context.WithTimeout(ctx, applyTimeout)
		_, err := c.Objects.Get(cctx, &hubv1.GetRequest{Ref: ref})
		cancel()
		switch {
		case err == nil:
			return true, nil
		case isNotFound(err):
			return false, nil
		}
		errs = append(errs, err)
	}
	return false, fmt.Errorf("get %s: no replica answered: %w", ref.GetName(), errors.Join(errs...))
}

// missingInMembers returns, by member, the ConfigMaps of names it does not
// hold.
func (x *fixture) missingInMembers(ctx context.Context, names []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, c := range x.kit.Clusters {
		list, err := c.Dynamic().Resource(configMaps).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: loadLabel + "=true"})
		if err != nil {
			return nil, fmt.Errorf("%s: list ConfigMaps: %w", c.Name, err)
		}
		have := map[string]bool{}
		for _, o := range list.Items {
			have[o.GetName()] = true
		}
		for _, n := range names {
			if !have[n] {
				out[c.Name] = append(out[c.Name], n)
			}
		}
	}
	return out, nil
}
