package rollout

import (
	"encoding/json"
	"fmt"
	"time"
)

// MaxHistory is how many contents of a template a Record keeps: the one
// at the newest revision and up to 3 before it, for undo.
const MaxHistory = 4

// Record is what the hub stores for one rolled-out work key: the rollout's
// State, the policy that paces it, and the template's last contents.
type Record struct {
	// Policy is the RolloutPolicy pacing the template, "<namespace>/<name>".
	Policy string `json:"policy"`
	State  State  `json:"state"`
	// History holds the template as it was at its last revisions, newest
	// first, at most MaxHistory; undo applies the one after the newest.
	History []Entry `json:"history,omitempty"`
	// Healthy holds, per cluster, the version of the revision the hub
	// first saw Healthy there and when: a soak counts from the hub's
	// observation, durable across restarts and leader changes.
	Healthy map[string]Seen `json:"healthy,omitempty"`
	// Watched is when the hub last stepped the rollout while it was in
	// progress (written at most every few seconds): a hub that resumes it
	// later does not count the gap, while nobody watched, against the
	// clusters in flight (Unwatched).
	Watched time.Time `json:"watched,omitzero"`
}

// Unwatched moves the deadlines and soaks of the clusters in flight by
// gap, the time nobody watched the rollout (a hub down, no leader): the
// rollout resumes at the step it was at, each cluster with the time it
// had left.
func (r *Record) Unwatched(gap time.Duration) {
	for name, c := range r.State.Clusters {
		if c.Phase.inFlight() {
			c.Since = c.Since.Add(gap)
			r.State.Clusters[name] = c
		}
	}
	for name, seen := range r.Healthy {
		seen.Since = seen.Since.Add(gap)
		r.Healthy[name] = seen
	}
}

// Seen is when the hub first saw a version Healthy.
type Seen struct {
	Version string    `json:"version"`
	Since   time.Time `json:"since"`
}

// Entry is a template's content at one revision.
type Entry struct {
	Revision string          `json:"revision"`
	Template json.RawMessage `json:"template"`
}

// Remember puts the template's content at rev first in the history,
// keeping MaxHistory entries; it reports whether the history changed.
func (r *Record) Remember(rev string, template json.RawMessage) bool {
	if len(r.History) > 0 && r.History[0].Revision == rev {
		return false
	}
	for i, e := range r.History {
		if e.Revision == rev {
			r.History = append(r.History[:i:i], r.History[i+1:]...)
			break
		}
	}
	r.History = append([]Entry{{Revision: rev, Template: template}}, r.History...)
	if len(r.History) > MaxHistory {
		r.History = r.History[:MaxHistory]
	}
	return true
}

// Previous is the history's entry before the newest one: what undo
// applies; ok is false when there is none.
func (r *Record) Previous() (Entry, bool) {
	if len(r.History) < 2 {
		return Entry{}, false
	}
	return r.History[1], true
}

// DecodeRecord reads a stored Record; a record without a rollout phase is
// refused, so that a reader holds it as unknown.
func DecodeRecord(data []byte) (*Record, error) {
	r := &Record{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("rollout record: %w", err)
	}
	if r.State.Phase == "" {
		return nil, fmt.Errorf("rollout record: no phase")
	}
	return r, nil
}
