package status

import (
	"time"

	"golang.org/x/time/rate"
)

// Defaults of the report schedule.
const (
	// DefaultCoalesce is how long a work's change waits before its status
	// is read and reported, so that the burst of events one change makes
	// (a Deployment's status is written several times as its pods come up)
	// goes out as one report. The wait starts at the first change; later
	// ones within it do not prolong it.
	DefaultCoalesce = 50 * time.Millisecond
	// DefaultWorkBurst is how many reports of one work may go out back to
	// back, each as soon as its change has coalesced; after that, one per
	// MinInterval (the hub's Settings.status_min_interval). A rollout's
	// few status changes are then each reported at once, and a work whose
	// status flaps costs at most one report per MinInterval.
	DefaultWorkBurst = 4
	// DefaultStreamRate and DefaultStreamBurst bound the reports of all
	// works together, reports per second and at once: half the hub's
	// default per-stream limit (hub/agentapi: 5,000 a second, bursts of
	// 20,000), so that however many works change together the agent stays
	// under it.
	DefaultStreamRate  = 2500
	DefaultStreamBurst = 10000
)

// schedule decides when a changed work's report may go out: each work
// has a token bucket (golang.org/x/time/rate) of workBurst reports
// refilled one per minInterval, and all works share one of streamBurst
// refilled at streamRate a second. It is pure: the caller passes the
// time. Not safe for concurrent use.
type schedule struct {
	minInterval time.Duration
	workBurst   int
	works       map[string]*rate.Limiter
	stream      *rate.Limiter
}

func newSchedule(minInterval time.Duration, workBurst int, streamRate float64, streamBurst int) *schedule {
	return &schedule{
		minInterval: minInterval,
		workBurst:   workBurst,
		works:       map[string]*rate.Limiter{},
		stream:      rate.NewLimiter(rate.Limit(streamRate), streamBurst),
	}
}

// wait is how long until a report of key may go out; 0: now. It takes
// nothing (take does, once the report is sent).
func (s *schedule) wait(key string, now time.Time) time.Duration {
	d := delay(s.stream, now)
	if w := s.works[key]; w != nil {
		d = max(d, delay(w, now))
	}
	return d
}

// delay is how long until l holds a whole token at now; 0 when it does.
func delay(l *rate.Limiter, now time.Time) time.Duration {
	tokens := l.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(l.Limit()) * float64(time.Second))
}

// take records a report of key sent at now. The buckets may go below
// zero (a report sent before wait allowed it); later waits make up for it.
func (s *schedule) take(key string, now time.Time) {
	w := s.works[key]
	if w == nil {
		w = rate.NewLimiter(rate.Every(s.minInterval), s.workBurst)
		s.works[key] = w
	}
	w.ReserveN(now, 1)
	s.stream.ReserveN(now, 1)
}

// setMinInterval changes the per-work refill interval from now on.
func (s *schedule) setMinInterval(d time.Duration, now time.Time) {
	s.minInterval = d
	for _, w := range s.works {
		w.SetLimitAt(now, rate.Every(d))
	}
}

// forget drops key's bucket: the work is no longer held.
func (s *schedule) forget(key string) { delete(s.works, key) }
