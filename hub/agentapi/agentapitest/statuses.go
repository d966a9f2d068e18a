package agentapitest

import (
	"context"
	"sync"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/hub/syncstate"
)

// Statuses is an in-memory agentapi.Statuses that records what it is given.
type Statuses struct {
	mu      sync.Mutex // guards the fields below
	acks    []Ack
	reports []Report
	digests map[string]map[string]syncstate.Digest // cluster → key → digest
	changed chan struct{}                          // closed and replaced at every record
	failing error
}

// Ack is one recorded ack with the cluster it was recorded for.
type Ack struct {
	Cluster string
	Ack     *agentv1.Ack
}

// Report is one recorded status report with its cluster.
type Report struct {
	Cluster string
	Report  *agentv1.StatusReport
}

var _ agentapi.Statuses = (*Statuses)(nil)

// NewStatuses returns empty Statuses.
func NewStatuses() *Statuses {
	return &Statuses{digests: make(map[string]map[string]syncstate.Digest), changed: make(chan struct{})}
}

// SetDigest records that the hub holds digest for a cluster's work.
func (s *Statuses) SetDigest(cluster, key string, d syncstate.Digest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.digests[cluster] == nil {
		s.digests[cluster] = make(map[string]syncstate.Digest)
	}
	s.digests[cluster][key] = d
}

// Fail makes every later call return err (nil: work again).
func (s *Statuses) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = err
}

// Ack implements agentapi.Statuses.
func (s *Statuses) Ack(ctx context.Context, cluster string, a *agentv1.Ack) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing != nil {
		return s.failing
	}
	s.acks = append(s.acks, Ack{Cluster: cluster, Ack: a})
	s.notifyLocked()
	return nil
}

// Report implements agentapi.Statuses.
func (s *Statuses) Report(ctx context.Context, cluster string, r *agentv1.StatusReport) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing != nil {
		return s.failing
	}
	s.reports = append(s.reports, Report{Cluster: cluster, Report: r})
	if s.digests[cluster] == nil {
		s.digests[cluster] = make(map[string]syncstate.Digest)
	}
	s.digests[cluster][r.GetWorkKey()] = syncstate.Digest{Version: r.GetVersion(), Digest: r.GetDigest()}
	s.notifyLocked()
	return nil
}

// Digests implements agentapi.Statuses.
func (s *Statuses) Digests(ctx context.Context, cluster string) (map[string]syncstate.Digest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing != nil {
		return nil, s.failing
	}
	out := make(map[string]syncstate.Digest, len(s.digests[cluster]))
	for k, d := range s.digests[cluster] {
		out[k] = d
	}
	return out, nil
}

// Recorded returns copies of the acks and reports recorded so far, and a
// channel closed at the next record.
func (s *Statuses) Recorded() ([]Ack, []Report, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ack(nil), s.acks...), append([]Report(nil), s.reports...), s.changed
}

func (s *Statuses) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
