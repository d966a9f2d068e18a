package rebalancer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// retryAfter is when a rebalancer whose writes failed (a conflict, the
// store away) is looked at again, besides every change of it.
const retryAfter = 2 * time.Second

// Store is what the loop writes through: the hub's fenced store.
type Store interface {
	Get(ctx context.Context, key string) (store.KV, error)
	Update(ctx context.Context, key string, value []byte, rev int64) (int64, error)
	Delete(ctx context.Context, key string, rev int64) (int64, error)
}

// Loop is the rebalancing loop.
type Loop struct {
	st    Store
	v     *view.View
	log   hclog.Logger
	clock func() time.Time
	// due holds, by rebalancer key, when to look again (a retry or the
	// TTL's end); only Run's goroutine uses it.
	due map[string]time.Time
}

// Option tunes a Loop.
type Option func(*Loop)

// WithClock sets the loop's clock (tests).
func WithClock(now func() time.Time) Option { return func(l *Loop) { l.clock = now } }

// New returns the loop over v, writing through st.
func New(st Store, v *view.View, logger hclog.Logger, opts ...Option) *Loop {
	l := &Loop{st: st, v: v, log: logger.Named("rebalancer"), clock: time.Now, due: map[string]time.Time{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Prefix is where rebalancers are stored.
var Prefix = store.KindPrefix(store.ObjectsPrefix, appsv1alpha1.GroupName, appsv1alpha1.KindWorkloadRebalancer, "")

// Run follows the rebalancers in the view until ctx ends, then returns
// nil. Every change of a rebalancer, and its due time, gets a look.
func (l *Loop) Run(ctx context.Context) error {
	sub := l.v.Subscribe(store.ObjectsPrefix) // a held prefix; changed keeps the rebalancers
	defer sub.Close()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var keys []string
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Ready():
			keys = l.changed(sub.Take())
		case <-timer.C:
		}
		keys = append(keys, l.dueNow()...)
		for _, key := range keys {
			l.reconcile(ctx, key)
		}
		l.arm(timer)
	}
}

// changed are the rebalancer keys of a batch; a full batch forgets the
// due times of keys it does not hold.
func (l *Loop) changed(b view.Batch) []string {
	var keys []string
	if b.Full {
		clear(l.due)
	}
	for _, c := range b.Changes {
		if !strings.HasPrefix(c.Key, Prefix) {
			continue
		}
		if c.Object == nil {
			delete(l.due, c.Key)
			continue
		}
		keys = append(keys, c.Key)
	}
	sort.Strings(keys)
	return keys
}

func (l *Loop) dueNow() []string {
	now := l.clock()
	var keys []string
	for k, at := range l.due {
		if !at.After(now) {
			keys = append(keys, k)
			delete(l.due, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// arm sets timer to the earliest due time.
func (l *Loop) arm(timer *time.Timer) {
	var next time.Time
	for _, at := range l.due {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if !timer.Stop() {
		select {
		case <-timer.C:
		default:
		}
	}
	if next.IsZero() {
		timer.Reset(time.Hour)
		return
	}
	timer.Reset(max(next.Sub(l.clock()), 0))
}

// reconcile looks at one rebalancer: triggers its workloads' bindings,
// records the results, and deletes it once its TTL after finishing has
// run out.
func (l *Loop) reconcile(ctx context.Context, key string) {
	o, ok := l.v.Get(key)
	if !ok || o.Err != nil || o.Value == nil {
		return // gone, or unknown: keep
	}
	r, err := typed(o)
	if err != nil {
		l.log.Warn("rebalancer does not decode, left as it is", "key", key, "error", err)
		return
	}
	if r.DeletionTimestamp != nil {
		return
	}
	log := l.log.With("rebalancer", r.Name)
	rev, err := l.pass(ctx, log, key, o.Revision, r)
	if err != nil {
		l.retry(log, key, err)
		return
	}
	l.expire(ctx, log, key, rev, r)
}

// pass triggers the pending workloads and writes the status when it
// changed; it returns the rebalancer's revision after its write.
func (l *Loop) pass(ctx context.Context, log hclog.Logger, key string, rev int64, r *appsv1alpha1.WorkloadRebalancer) (int64, error) {
	p := Decide(r, l.lookup)
	retry := p.Unknown
	var firstErr error
	for _, i := range p.Trigger {
		w := p.Observed[i].Workload
		if err := l.trigger(ctx, BindingKey(w), r); err != nil {
			retry++
			firstErr = firstOf(firstErr, fmt.Errorf("trigger %s %s/%s: %w", w.Kind, w.Namespace, w.Name, err))
			continue
		}
		log.Info("rescheduling triggered", "kind", w.Kind, "namespace", w.Namespace, "name", w.Name)
		p.Observed[i].Result = appsv1alpha1.RebalanceSuccessful
	}
	status, changed := Status(r, p.Observed, retry, l.clock())
	if changed {
		var err error
		if rev, err = l.writeStatus(ctx, key, rev, status); err != nil {
			return rev, firstOf(firstErr, err)
		}
		if retry == 0 {
			log.Info("rebalance finished", "workloads", len(status.ObservedWorkloads), "finish_time", status.FinishTime.UTC())
		}
		r.Status = status
	}
	if retry > 0 {
		return rev, firstOf(firstErr, fmt.Errorf("%d workloads to retry", retry))
	}
	return rev, nil
}

// firstOf is the first error, else err.
func firstOf(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// expire deletes a finished rebalancer whose TTL has run out (compared on
// its revision: a rebalancer changed since is looked at again first), or
// looks again when it will have.
func (l *Loop) expire(ctx context.Context, log hclog.Logger, key string, rev int64, r *appsv1alpha1.WorkloadRebalancer) {
	at, ok := r.ExpiresAt()
	if !ok {
		return
	}
	if wait := at.Sub(l.clock()); wait > 0 {
		l.due[key] = at.Time
		return
	}
	if _, err := l.st.Delete(ctx, key, rev); err != nil && !errors.Is(err, store.ErrNotFound) {
		l.retry(log, key, fmt.Errorf("delete after its TTL: %w", err))
		return
	}
	log.Info("rebalancer deleted, its TTL after finishing ran out", "finished", r.Status.FinishTime.UTC(), "ttl_seconds", *r.Spec.TTLSecondsAfterFinished)
}

func (l *Loop) retry(log hclog.Logger, key string, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	log.Warn("rebalancer not done, retrying", "error", err, "retry_after", retryAfter)
	l.due[key] = l.clock().Add(retryAfter)
}

// lookup reads a workload's binding from the view.
func (l *Loop) lookup(w appsv1alpha1.ObjectReference) (triggered *metav1.Time, found, unknown bool) {
	o, ok := l.v.Get(BindingKey(w))
	if !ok {
		return nil, false, false
	}
	b, isBinding := o.Value.(*workv1alpha1.ResourceBinding)
	if o.Err != nil || !isBinding || b == nil {
		return nil, true, true
	}
	return b.Spec.RescheduleTriggeredAt, true, false
}

// typed converts the view's object into a WorkloadRebalancer.
func typed(o *view.Object) (*appsv1alpha1.WorkloadRebalancer, error) {
	u, ok := o.Value.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("view holds %T", o.Value)
	}
	r := &appsv1alpha1.WorkloadRebalancer{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r); err != nil {
		return nil, err
	}
	return r, nil
}
