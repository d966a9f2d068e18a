package rollout

import "time"

// Phase is one cluster's place in a rollout.
type Phase string

// Cluster phases.
const (
	// Pending: not admitted yet; the cluster keeps the stable revision.
	Pending Phase = "Pending"
	// Waiting: its wave has come but none of its maintenance windows is open.
	Waiting Phase = "Waiting"
	// Updating: admitted, the revision is being applied or is not Healthy yet.
	Updating Phase = "Updating"
	// Soaking: Healthy at the revision, for less than minSuccessTime.
	Soaking Phase = "Soaking"
	// Succeeded: Healthy at the revision for minSuccessTime.
	Succeeded Phase = "Succeeded"
	// Failed: the revision failed to apply, or was not Healthy in time.
	Failed Phase = "Failed"
	// Skipped: unreachable when its turn came or while in flight.
	Skipped Phase = "Skipped"
)

// terminal reports whether a cluster in phase p is done with the revision.
func (p Phase) terminal() bool { return p == Succeeded || p == Failed || p == Skipped }

// inFlight reports whether a cluster in phase p counts against maxConcurrency.
func (p Phase) inFlight() bool { return p == Updating || p == Soaking }

// RolloutPhase is the whole rollout's state.
type RolloutPhase string

// Rollout phases.
const (
	Progressing RolloutPhase = "Progressing"
	// Paused: by an operator, or because of too many failures (Message says which).
	Paused RolloutPhase = "Paused"
	// Complete: every cluster is done; Stable is the revision.
	Complete RolloutPhase = "Complete"
)

// ClusterState is one cluster's progress in the rollout.
type ClusterState struct {
	Phase Phase `json:"phase"`
	// Revision is the revision the cluster was last given ("" for the
	// stable one). A cluster admitted to a revision keeps it (Skipped or
	// Failed too) until it is admitted to a newer one or the rollout
	// completes.
	Revision string `json:"revision,omitempty"`
	// Since is when the cluster was last admitted (the deadline counts from it).
	Since time.Time `json:"since,omitzero"`
	// Late is set for a cluster that was Skipped and came back.
	Late    bool   `json:"late,omitempty"`
	Message string `json:"message,omitempty"`
}

// State is a rollout's durable state: what the hub stores for a binding.
type State struct {
	// Revision is the revision being rolled out; Stable the last one that
	// completed ("" before the first).
	Revision string       `json:"revision"`
	Stable   string       `json:"stable,omitempty"`
	Phase    RolloutPhase `json:"phase"`
	Message  string       `json:"message,omitempty"`
	// Held is set by an operator's pause.
	Held bool `json:"held,omitempty"`
	// Tolerated is the number of failures an operator resumed past.
	Tolerated int                     `json:"tolerated,omitempty"`
	Clusters  map[string]ClusterState `json:"clusters,omitempty"`
}

// Target is the revision cluster's work is rendered at: the last revision
// it was admitted to, else the stable one ("" means no work yet: the first
// revision is gated too).
func (s *State) Target(cluster string) string {
	if c, ok := s.Clusters[cluster]; ok && c.Revision != "" {
		return c.Revision
	}
	return s.Stable
}

// Pause holds the rollout: no cluster is admitted until Resume.
func (s *State) Pause() { s.Held = true }

// Resume lifts an operator's pause and tolerates the failures so far, so
// that a rollout paused by failures goes on.
func (s *State) Resume() {
	s.Held = false
	s.Tolerated = s.count(Failed)
}

func (s *State) count(p Phase) int {
	n := 0
	for _, c := range s.Clusters {
		if c.Phase == p {
			n++
		}
	}
	return n
}

func (s State) clone() State {
	out := s
	out.Clusters = make(map[string]ClusterState, len(s.Clusters))
	for k, v := range s.Clusters {
		out.Clusters[k] = v
	}
	return out
}
