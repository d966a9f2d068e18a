package status

import "time"

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

// bucket is a token bucket: burst tokens, refilled one per every.
type bucket struct {
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

// refill brings b up to now.
func (b *bucket) refill(now time.Time, every time.Duration, burst float64) {
	if b.at.IsZero() {
		b.tokens, b.at = burst, now
		return
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(burst, b.tokens+float64(d)/float64(every))
		b.at = now
	}
}

// wait is how long until b holds a whole token; 0 when it does.
func (b *bucket) wait(every time.Duration) time.Duration {
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) * float64(every))
}

// schedule decides when a changed work's report may go out: each work
// has a bucket of workBurst reports refilled one per minInterval, and all
// works share one of streamBurst refilled at streamRate a second. It is
// pure: the caller passes the time. Not safe for concurrent use.
type schedule struct {
	minInterval time.Duration
	workBurst   int
	streamEvery time.Duration // 1 / the stream's rate
	streamBurst int
	works       map[string]*bucket
	stream      bucket
}

func newSchedule(minInterval time.Duration, workBurst int, streamRate float64, streamBurst int) *schedule {
	return &schedule{
		minInterval: minInterval,
		workBurst:   workBurst,
		streamEvery: time.Duration(float64(time.Second) / streamRate),
		streamBurst: streamBurst,
		works:       map[string]*bucket{},
	}
}

// wait is how long until a report of key may go out; 0: now. It takes
// nothing (take does, once the report is sent).
func (s *schedule) wait(key string, now time.Time) time.Duration {
	s.stream.refill(now, s.streamEvery, float64(s.streamBurst))
	w := s.works[key]
	if w == nil {
		return s.stream.wait(s.streamEvery)
	}
	w.refill(now, s.minInterval, float64(s.workBurst))
	return max(w.wait(s.minInterval), s.stream.wait(s.streamEvery))
}

// take records a report of key sent at now.
func (s *schedule) take(key string, now time.Time) {
	s.stream.refill(now, s.streamEvery, float64(s.streamBurst))
	w := s.works[key]
	if w == nil {
		w = &bucket{}
		s.works[key] = w
	}
	w.refill(now, s.minInterval, float64(s.workBurst))
	w.tokens--
	s.stream.tokens--
}

// setMinInterval changes the per-work refill interval.
func (s *schedule) setMinInterval(d time.Duration) { s.minInterval = d }

// forget drops key's bucket: the work is no longer held.
func (s *schedule) forget(key string) { delete(s.works, key) }
