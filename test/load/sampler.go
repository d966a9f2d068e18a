package load

import (
	"context"
	"sync"
	"time"
)

// sampleInterval is how often the hub's memory and CPU are sampled.
const sampleInterval = time.Second

// Sample is the hub process at one time.
type Sample struct {
	// T is seconds since the run started.
	T     float64 `json:"t"`
	RSS   int64   `json:"rssBytes"`
	CPU   float64 `json:"cpuSeconds"`
	Phase string  `json:"phase"`
}

// sampler samples the hub until stopped.
type sampler struct {
	pid   func() int
	start time.Time
	done  chan struct{}
	quit  chan struct{}

	mu      sync.Mutex // guards samples and current
	samples []Sample
	current string
}

func newSampler(pid func() int) *sampler {
	return &sampler{pid: pid, start: time.Now(), done: make(chan struct{}), quit: make(chan struct{}), current: "connect"}
}

func (s *sampler) run(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(sampleInterval)
	defer t.Stop()
	for {
		s.sample()
		select {
		case <-ctx.Done():
			return
		case <-s.quit:
			return
		case <-t.C:
		}
	}
}

func (s *sampler) stop() {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	<-s.done
}

func (s *sampler) sample() {
	u, err := readUsage(s.pid())
	if err != nil {
		return // the hub is restarting
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, Sample{T: time.Since(s.start).Seconds(), RSS: u.RSS, CPU: u.CPU.Seconds(), Phase: s.current})
}

// phase names the scenario that runs from now on, with a sample at its
// start: a short scenario has one.
func (s *sampler) phase(name string) {
	s.mu.Lock()
	s.current = name
	s.mu.Unlock()
	s.sample()
}

func (s *sampler) all() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

// peak is the highest RSS sampled in phase ("" for any).
func (s *sampler) peak(phase string) int64 { return peakOf(s.all(), phase) }

func peakOf(samples []Sample, phase string) int64 {
	var p int64
	for _, x := range samples {
		if phase == "" || x.Phase == phase {
			p = max(p, x.RSS)
		}
	}
	return p
}
