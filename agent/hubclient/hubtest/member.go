package hubtest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Call is one call the Applier received.
type Call struct {
	Op      string // "apply" or "delete"
	Key     string
	Version string
	Policy  agentv1.DeletionPolicy // for a delete
	Reason  agentv1.DeleteReason   // for a delete
}

// Applier is a fake hubclient.Applier that records its calls and applies
// everything (or fails as told).
type Applier struct {
	mu    sync.Mutex // guards the fields below
	calls []Call
	fail  map[string]string // key → failure message
	hang  bool              // deletes wait for their ctx to end
	wake  chan struct{}
}

// NewApplier returns an Applier that applies everything.
func NewApplier() *Applier {
	return &Applier{fail: map[string]string{}, wake: make(chan struct{}, 1)}
}

// Fail makes applies of key fail with msg ("" to succeed again).
func (a *Applier) Fail(key, msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fail[key] = msg
}

// Apply records the call and acks APPLIED or FAILED.
func (a *Applier) Apply(ctx context.Context, w state.Work) (*agentv1.Ack, error) {
	a.record(Call{Op: "apply", Key: w.Key, Version: w.Version})
	a.mu.Lock()
	msg := a.fail[w.Key]
	a.mu.Unlock()
	if msg != "" {
		return &agentv1.Ack{Result: agentv1.ApplyResult_APPLY_RESULT_FAILED, Message: msg}, nil
	}
	return &agentv1.Ack{WorkKey: w.Key, Version: w.Version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}, nil
}

// HangDeletes makes every later Delete wait until its ctx ends and fail,
// as a deletion cut short by a crash.
func (a *Applier) HangDeletes() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hang = true
}

// Delete records the call (then hangs, after HangDeletes).
func (a *Applier) Delete(ctx context.Context, w state.Work, r state.Removal) error {
	a.record(Call{Op: "delete", Key: w.Key, Version: w.Version, Policy: r.Policy, Reason: r.Reason})
	a.mu.Lock()
	hang := a.hang
	a.mu.Unlock()
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (a *Applier) record(c Call) {
	a.mu.Lock()
	a.calls = append(a.calls, c)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// Calls returns the calls so far.
func (a *Applier) Calls() []Call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Call(nil), a.calls...)
}

// WaitFor waits until a call equal to want was made, and returns an error
// after Timeout.
func (a *Applier) WaitFor(want Call) error {
	deadline := time.After(Timeout)
	for {
		for _, c := range a.Calls() {
			if c == want {
				return nil
			}
		}
		select {
		case <-a.wake:
		case <-deadline:
			return fmt.Errorf("hubtest: no call %+v within %s; calls: %+v", want, Timeout, a.Calls())
		}
	}
}

// Status is a fake hubclient.StatusSource: the test pushes reports with
// Push and reads the Resend requests from Resends.
type Status struct {
	ch chan *agentv1.StatusReport
	// Resends receives the keys of every Resend call.
	Resends chan []string
}

// NewStatus returns an empty Status.
func NewStatus() *Status {
	return &Status{ch: make(chan *agentv1.StatusReport, 64), Resends: make(chan []string, 64)}
}

// Reports returns the reports channel.
func (s *Status) Reports() <-chan *agentv1.StatusReport { return s.ch }

// Resend records keys.
func (s *Status) Resend(keys []string) { s.Resends <- keys }

// PushReport queues r.
func (s *Status) PushReport(r *agentv1.StatusReport) { s.ch <- r }

// Push queues a report of key at version with digest.
func (s *Status) Push(key, version, digest string) {
	s.ch <- &agentv1.StatusReport{WorkKey: key, Version: version, Digest: digest}
}
