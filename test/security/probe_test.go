package security

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// The probe: what a well-behaved admin and agent do while an attack runs.
const (
	// probeMinCycles is the fewest apply-and-heartbeat cycles a probe
	// makes, however short the attack: the figures of an attack over in a
	// millisecond still come from several calls.
	probeMinCycles = 5
	// probeLabel marks the ConfigMaps a probe applies, with the attack's
	// number as its value, so that all of them can be listed afterwards.
	probeLabel = "security.tether.io/probe"
	// heartbeatPollInterval is how often the probe asks GetCluster
	// whether its heartbeat has been read: the resolution of the heartbeat
	// latency.
	heartbeatPollInterval = 2 * time.Millisecond
	// defaultBystanders is how many healthy clusters the probe's
	// heartbeats go round (bystanders_test.go) in a hostile env.
	defaultBystanders = 8
)

// probe applies a ConfigMap as an admin and sends a heartbeat on a
// bystander's stream (at least once, and whenever a bystander is ready
// for a timed one: heartbeatRead), again and again, from start until stop, recording
// how long each took. Failures are kept for stop to report: the probe runs
// in its own goroutine, which must not fail the test itself.
type probe struct {
	e    *hostileEnv
	id   string // the attack's number, the value of probeLabel
	done chan struct{}

	// Written by the probe's goroutine only, read after done is closed.
	applies, heartbeats []time.Duration
	applied             []string // names of the ConfigMaps applied
	errs                []error
	// during counts the cycles that started while the attack still ran.
	during int

	mu       sync.Mutex // guards attackOn
	attackOn bool
}

// startProbe starts a probe for the attack numbered id; stop ends it.
func (e *hostileEnv) startProbe(id string) *probe {
	p := &probe{e: e, id: id, done: make(chan struct{}), attackOn: true}
	go p.run()
	return p
}

func (p *probe) run() {
	defer close(p.done)
	for n := 0; ; n++ {
		on := p.attackRunning()
		if n >= probeMinCycles && !on {
			return
		}
		if on {
			p.during++
		}
		if err := p.cycle(n); err != nil {
			p.errs = append(p.errs, err)
			return // the hub failed a probe: no figures will mean anything
		}
	}
}

func (p *probe) attackRunning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.attackOn
}

// stop waits for the probe's remaining cycles and returns what it
// measured; the attack has ended.
func (p *probe) stop() *probe {
	p.mu.Lock()
	p.attackOn = false
	p.mu.Unlock()
	<-p.done
	return p
}

// cycle makes one apply and one heartbeat.
func (p *probe) cycle(n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	name := fmt.Sprintf("probe-%s-%d", p.id, n)
	manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default, labels: {%s: %q}}\ndata: {n: %q}\n",
		name, probeLabel, p.id, fmt.Sprint(n))
	start := time.Now()
	resp, err := p.e.objects().Apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(manifest)})
	if err != nil {
		return fmt.Errorf("probe apply %s: %w", name, err)
	}
	if r := resp.GetResults(); len(r) != 1 || r[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_CREATED {
		return fmt.Errorf("probe apply %s = %v; want CREATED", name, r)
	}
	p.applies = append(p.applies, time.Since(start))
	p.applied = append(p.applied, name)
	// The first cycle's heartbeat waits for a bystander whose state change
	// the hub writes at once; later cycles time one only when a bystander
	// is ready for it (heartbeatRead).
	took, ok, err := p.e.heartbeatRead(ctx, fmt.Sprintf("hb-%s-%d", p.id, n), len(p.heartbeats) == 0)
	if err != nil {
		return err
	}
	if ok {
		p.heartbeats = append(p.heartbeats, took)
	}
	return nil
}

// lostApplies lists the probe's applied ConfigMaps the hub no longer has.
func (p *probe) lostApplies(ctx context.Context) ([]string, error) {
	have := map[string]bool{}
	req := &hubv1.ListRequest{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", LabelSelector: probeLabel + "=" + p.id, PageSize: 5000}
	for {
		resp, err := p.e.objects().List(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list the probe's ConfigMaps: %w", err)
		}
		for _, o := range resp.GetObjects() {
			have[o.GetRef().GetName()] = true
		}
		if req.PageToken = resp.GetNextPageToken(); req.PageToken == "" {
			break
		}
	}
	var lost []string
	for _, name := range p.applied {
		if !have[name] {
			lost = append(lost, name)
		}
	}
	return lost, nil
}

// latency is the summary of a set of call durations.
type latency struct {
	N             int
	P50, P99, Max time.Duration
	samples       []time.Duration
}

func summarize(d []time.Duration) latency {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	l := latency{N: len(s)}
	if len(s) == 0 {
		return l
	}
	l.P50, l.P99, l.Max = rank(s, 50), rank(s, 99), s[len(s)-1]
	return l
}

// rank is the nearest-rank percentile q of sorted s.
func rank(s []time.Duration, q int) time.Duration {
	i := (q*len(s) + 99) / 100
	return s[max(0, min(len(s), i)-1)]
}
