package ctl

// apply --wait: follow each applied template's placement and per-cluster
// status until every target cluster runs it ready, or the timeout.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/placement"
)

// defaultWaitTimeout is --timeout's default for apply --wait, as kubectl
// rollout status.
const defaultWaitTimeout = 5 * time.Minute

// rollout is one template's progress, computed from its placement and
// binding by progressOf.
type rollout struct {
	// line is the progress as shown: "m1 2/3  m2 1/1 ready".
	line string
	// done: every target cluster runs the applied revision ready.
	done bool
	// missing says what is not ready yet, for the timeout message.
	missing []string
}

// progressOf is the rollout of a template applied as want, given
// its placement and binding (nil when none exists). A cluster is ready when
// it applied the work, is not stale, and its workload has readyReplicas
// (and updatedReplicas, when reported) equal to replicas and at least the
// replicas placed there; objects without replicas are ready when their
// health is Healthy. A status item carries no work version, so in the
// seconds after a change is applied a cluster's item may still describe
// the previous revision; updatedReplicas (Deployments) narrows that window,
// and the binding's resource version must have reached rev.
func progressOf(pl *hubv1.Placement, b *workv1alpha1.ResourceBinding, want applied) rollout {
	switch {
	case pl.GetPolicy() == nil && pl.GetBinding() == nil:
		return rollout{line: "no propagation policy matches it", missing: []string{"no propagation policy matches it: apply one"}}
	case b == nil || !pl.GetScheduled():
		why := orText(pl.GetMessage(), "waiting for the scheduler")
		return rollout{line: "not scheduled: " + why, missing: []string{"not scheduled: " + why}}
	case bindingRevision(b) != 0 && bindingRevision(b) < want.revision:
		return rollout{line: "waiting for the hub to take the new revision", missing: []string{"the hub has not processed the applied revision"}}
	case !scheduledCurrent(b):
		return rollout{line: "waiting for the scheduler", missing: []string{"not scheduled yet for the applied revision"}}
	case len(b.Spec.Clusters) == 0:
		return rollout{line: "placed in no cluster", done: true}
	}
	items := map[string]configv1alpha1.AggregatedStatusItem{}
	for _, it := range b.Status.AggregatedStatus {
		items[it.ClusterName] = it
	}
	stale := fold.StaleClusters(b)
	r := rollout{done: true}
	var parts []string
	// The clusters come from the binding, not the placement: the binding
	// is read after the placement event, so it is the newer of the two,
	// and scheduledCurrent judged it.
	for _, c := range b.Spec.Clusters {
		it, ok := items[c.Name]
		text, ready := clusterProgress(it, ok, slices.Contains(stale, c.Name), c.Replicas, want.generation)
		parts = append(parts, c.Name+" "+text)
		if !ready {
			r.done = false
			r.missing = append(r.missing, c.Name+" "+text)
		}
	}
	r.line = strings.Join(parts, "  ")
	return r
}

// clusterProgress renders one cluster's item ("2/3", "3/3 ready", "not
// applied: ...") and says whether it is ready.
func clusterProgress(it configv1alpha1.AggregatedStatusItem, reported, stale bool, want int32, generation int64) (string, bool) {
	switch {
	case !reported:
		return "waiting for the agent", false
	case stale:
		return "stale (the agent stopped reporting)", false
	case !it.Applied && it.AppliedMessage != "":
		return "not applied: " + it.AppliedMessage, false
	case !it.Applied:
		return "not applied yet", false
	}
	var st memberStatus
	if it.Status != nil && json.Unmarshal(it.Status.Raw, &st) == nil && st.Replicas != nil {
		ready := st.current(generation) && st.ReadyReplicas == *st.Replicas && (want == 0 || *st.Replicas == int64(want)) &&
			(st.UpdatedReplicas == nil || *st.UpdatedReplicas == *st.Replicas)
		total := max(*st.Replicas, int64(want))
		if ready {
			return fmt.Sprintf("%d/%d ready", st.ReadyReplicas, total), true
		}
		return fmt.Sprintf("%d/%d", st.ReadyReplicas, total), false
	}
	if it.Health == configv1alpha1.ResourceHealthy {
		return "healthy", true
	}
	return strings.ToLower(orText(string(it.Health), "Unknown")), false
}

// scheduledCurrent reports whether the binding's clusters are the
// scheduler's answer to its current spec. Bindings carry no generation, so
// this is the scheduling loop's own test (placement.NeedsSchedule: a
// changed placement or replica count, a reschedule asked for; a binding
// without the loop's record counts as scheduled when its condition says
// so), plus, for Duplicated, which the loop re-evaluates every pass, every
// cluster holding the binding's replicas.
func scheduledCurrent(b *workv1alpha1.ResourceBinding) bool {
	if b.Spec.Placement == nil {
		return true
	}
	switch placement.NeedsSchedule(b, func(string) bool { return true }) {
	case placement.ReasonPlacementChanged, placement.ReasonReplicasChanged, placement.ReasonRescheduleTriggered:
		return false
	}
	if b.Spec.Replicas == 0 || b.Spec.Placement.ReplicaSchedulingType() != policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		return true
	}
	for _, c := range b.Spec.Clusters {
		if c.Replicas != b.Spec.Replicas {
			return false
		}
	}
	return true
}

// memberStatus is what --wait reads of a member's workload status: the
// replica counts and the generations the agent's status reflection adds
// (as Karmada's does).
type memberStatus struct {
	Replicas        *int64 `json:"replicas"`
	ReadyReplicas   int64  `json:"readyReplicas"`
	UpdatedReplicas *int64 `json:"updatedReplicas"`
	// ResourceTemplateGeneration is the template generation the member
	// object was rendered from; Generation and ObservedGeneration are the
	// member object's own, and its controller's progress on it.
	ResourceTemplateGeneration int64 `json:"resourceTemplateGeneration"`
	Generation                 int64 `json:"generation"`
	ObservedGeneration         int64 `json:"observedGeneration"`
}

// current reports whether the status describes the template's generation
// (when both are known) and the member's controller has seen its latest
// spec: a status from before the change is never counted as ready.
func (st memberStatus) current(generation int64) bool {
	if generation > 0 && st.ResourceTemplateGeneration > 0 && st.ResourceTemplateGeneration != generation {
		return false
	}
	return st.Generation == 0 || st.ObservedGeneration >= st.Generation
}

// applied is what --wait waits for: the template's revision and
// generation as the apply stored them (0 when unknown: not checked).
type applied struct {
	revision, generation int64
}

// appliedOf reads the apply result of a template.
func appliedOf(r *hubv1.ApplyResult) applied {
	var m struct {
		Metadata struct {
			Generation int64 `json:"generation"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(r.GetObjectJson(), &m) // the hub wrote it; without it the check is skipped
	return applied{revision: r.GetRevision(), generation: m.Metadata.Generation}
}

// bindingRevision is the template revision the binding was built from; 0
// when it does not say (then the check is skipped).
func bindingRevision(b *workv1alpha1.ResourceBinding) int64 {
	v, err := strconv.ParseInt(b.Spec.Resource.ResourceVersion, 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// orText is s, or def when empty.
func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// waited is one template to wait for.
type waited struct {
	ref     *hubv1.ObjectRef
	want    applied
	state   rollout
	printed bool
}

// progressUpdate is what a follower sends: a new rollout of template i, or
// an error that ends the wait.
type progressUpdate struct {
	i     int
	state rollout
	err   error
}

// waitRollout follows the templates among results until all are rolled out
// (nil) or timeout passes (an error saying what is missing). It prints a
// progress line per template whenever it changes.
func waitRollout(ctx context.Context, s IO, c *client.Client, results []*hubv1.ApplyResult, timeout time.Duration) error {
	var ws []*waited
	for _, r := range results {
		if ref := r.GetRef(); !codec.Known(ref.GetApiVersion(), ref.GetKind()) {
			ws = append(ws, &waited{ref: ref, want: appliedOf(r)})
		}
	}
	if len(ws) == 0 {
		return nil // policies only: nothing rolls out
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	updates := make(chan progressUpdate)
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			follow(wctx, c, w, func(u progressUpdate) bool {
				u.i = i
				select {
				case updates <- u:
					return true
				case <-wctx.Done():
					return false
				}
			})
		}()
	}
	err := collect(wctx, s, ws, updates)
	cancel()
	wg.Wait()
	return err
}

// collect prints updates until every template is done, one fails, or ctx
// ends.
func collect(ctx context.Context, s IO, ws []*waited, updates <-chan progressUpdate) error {
	start := time.Now()
	for {
		select {
		case u := <-updates:
			if u.err != nil && !expired(ctx) {
				return u.err
			}
			if u.err != nil {
				continue // the timeout ended the follower's call: report the timeout
			}
			w := ws[u.i]
			if !w.printed || u.state.line != w.state.line {
				fmt.Fprintf(s.Out, "%s  %s\n", kindName(w.ref), u.state.line)
			}
			w.state, w.printed = u.state, true
			if allDone(ws) {
				fmt.Fprintf(s.Out, "rolled out in %s\n", time.Since(start).Round(100*time.Millisecond))
				return nil
			}
		case <-ctx.Done():
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return ctx.Err()
			}
			return timeoutError(ws, time.Since(start))
		}
	}
}

// expired reports whether ctx ended or its deadline passed. gRPC ends a
// call whose deadline passed as soon as it sees the clock past it (as
// DeadlineExceeded, also when the hub's reset arrives first), which on a
// busy machine can be before the context's own timer has fired: that
// error is the wait's timeout, not the hub's failure.
func expired(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(d)
}

func allDone(ws []*waited) bool {
	for _, w := range ws {
		if !w.state.done {
			return false
		}
	}
	return true
}

// timeoutError says what every unfinished template is missing and what to
// do about it.
func timeoutError(ws []*waited, after time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "timed out after %s before the rollout finished (the objects are applied):", after.Round(time.Second))
	for _, w := range ws {
		if w.state.done {
			continue
		}
		missing := w.state.missing
		if !w.printed {
			missing = []string{"no answer from the hub yet"}
		}
		fmt.Fprintf(&b, "\n  %s: %s", kindName(w.ref), strings.Join(missing, "; "))
	}
	first := ws[0]
	for _, w := range ws {
		if !w.state.done {
			first = w
			break
		}
	}
	fmt.Fprintf(&b, "\nsee why with `tetherctl describe %s %s -n %s`, or wait longer with --timeout",
		strings.ToLower(first.ref.GetKind()), first.ref.GetName(), orText(first.ref.GetNamespace(), "default"))
	return errors.New(b.String())
}

// kindName is kind/name, as apply prints objects.
func kindName(ref *hubv1.ObjectRef) string {
	return strings.ToLower(ref.GetKind()) + "/" + ref.GetName()
}

// follow watches w's placement and sends its rollout after every change
// (the watch fires on template and binding writes, status included) until
// ctx ends or send refuses. The client resumes a broken watch; one it
// cannot resume but that can start over (client.Restartable) is opened
// again from the start; other errors are sent and end it.
func follow(ctx context.Context, c *client.Client, w *waited, send func(progressUpdate) bool) {
	for ctx.Err() == nil {
		err := followOnce(ctx, c, w, send)
		if err != nil && !client.Restartable(err) {
			if !expired(ctx) {
				send(progressUpdate{err: err})
			}
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(rewatchPause):
		}
	}
}

// followOnce runs one placement watch; nil when send refused.
func followOnce(ctx context.Context, c *client.Client, w *waited, send func(progressUpdate) bool) error {
	for ev, err := range c.WatchPlacement(ctx, w.ref, 0) {
		if err != nil {
			return err
		}
		if ev.GetType() == hubv1.EventType_EVENT_TYPE_DELETED {
			return fmt.Errorf("%s was deleted while waiting for it", kindName(w.ref))
		}
		b, err := bindingOf(ctx, c, ev.GetPlacement())
		if err != nil {
			return err
		}
		if !send(progressUpdate{state: progressOf(ev.GetPlacement(), b, w.want)}) {
			return nil
		}
	}
	return nil
}
