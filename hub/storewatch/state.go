package storewatch

import "time"

// probe is one read of the store as the watch ran it, on the monotonic
// clock.
type probe struct {
	ok bool
	// due is when the probe should have started; start and end are when it
	// did and when it returned.
	due, start, end time.Time
	// waited is how long the process's runnable goroutines waited to run
	// during the probe (storeProbeWaitQuantile of them).
	waited time.Duration
}

// late is how late the process ran the probe: the most of how late it
// started, how long after its timeout it returned, and how long its
// goroutines waited to run meanwhile.
func (p probe) late() time.Duration {
	late := max(p.start.Sub(p.due), p.waited)
	if !p.ok {
		late = max(late, p.end.Sub(p.start)-storeProbeTimeout)
	}
	return late
}

// storeState is the watch's decision, apart from time and I/O.
type storeState struct {
	// failingSince is when the first of the failed probes in a row, each
	// on time, started; zero when the last probe succeeded or ran late.
	failingSince time.Time
	down         bool // the store is lost: lost was called, found was not
	starved      bool // the last probe failed and ran late
}

// transition is what one probe changes.
type transition int

const (
	storeSame    transition = iota
	storeLost               // failed on time for storeLossGrace: hand the agents over
	storeFound              // answered after storeLost: serve again
	storeStarved            // failed late, after a probe that ran on time or succeeded: not counted
)

// observe records one probe and says what it changes.
func (s *storeState) observe(p probe) transition {
	switch {
	case p.ok:
		s.failingSince, s.starved = time.Time{}, false
		if s.down {
			s.down = false
			return storeFound
		}
		return storeSame
	case p.late() > storeProbeLateness:
		s.failingSince = time.Time{} // no evidence either way: it starts again
		if s.starved {
			return storeSame
		}
		s.starved = true
		return storeStarved
	}
	s.starved = false
	if s.failingSince.IsZero() {
		s.failingSince = p.start
	}
	if !s.down && p.end.Sub(s.failingSince) >= storeLossGrace {
		s.down = true
		return storeLost
	}
	return storeSame
}
