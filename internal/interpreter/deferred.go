package interpreter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// ErrPending is the error (under errors.Is) of a Deferred call whose
// answer is being computed in the background: the caller tries again
// when Deferred.Ready is signalled.
var ErrPending = errors.New("interpreter: answer pending (a webhook is being called)")

// Bounds of a Deferred.
const (
	// maxDeferredCalls is how many webhook calls a Deferred makes at once;
	// a call beyond it is pending until one of them ends. Each may take its
	// webhook's timeout (at most 30 s).
	maxDeferredCalls = 4
	// maxDeferredAnswers is how many answers wait to be taken; past it the
	// oldest is forgotten (its caller then asks again).
	maxDeferredAnswers = 1024
)

// Deferred answers, for a controller's single loop, the calls that a
// webhook answers (Interpreter.Remote) without waiting on the webhook: the
// first call for an object starts the webhook call in the background and
// fails with ErrPending; Ready is signalled when it has ended, and the
// same call (same operation, same object) then returns its answer, once.
// Other calls go to the Interpreter directly. Close stops the background
// calls and waits for them.
type Deferred struct {
	i *Interpreter
	// ctx is the background calls' lifetime, cancelled by Close: an
	// owner's context, not a request's.
	ctx    context.Context
	cancel context.CancelFunc
	ready  chan struct{} // capacity 1, signalled after each call ends
	wg     sync.WaitGroup

	mu sync.Mutex // guards the fields below
	// answers are the ended calls by key, not yet taken; order lists
	// their keys, oldest first.
	answers map[string]answer
	order   []string
	// inflight are the keys of the calls running.
	inflight map[string]bool
	closed   bool
}

type answer struct {
	value any
	err   error
}

// NewDeferred returns a Deferred over i.
func NewDeferred(i *Interpreter) *Deferred {
	d := &Deferred{i: i, ready: make(chan struct{}, 1), answers: map[string]answer{}, inflight: map[string]bool{}}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d
}

// Ready is signalled after a background call ends: the callers that got
// ErrPending try again.
func (d *Deferred) Ready() <-chan struct{} { return d.ready }

// Close cancels the background calls and waits for them; afterwards a
// call a webhook answers fails at once.
func (d *Deferred) Close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
}

// HookEnabled is the Interpreter's.
func (d *Deferred) HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool {
	return d.i.HookEnabled(gvk, op)
}

// GetReplicas is the Interpreter's, deferred when a webhook answers it.
func (d *Deferred) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, error) {
	op := configv1alpha1.InterpreterOperationInterpretReplica
	if !d.i.Remote(obj.GroupVersionKind(), op) {
		return d.i.GetReplicas(ctx, obj)
	}
	type replicas struct {
		n   int32
		req *configv1alpha1.ReplicaRequirements
	}
	v, err := d.call(op, obj, nil, func(ctx context.Context) (any, error) {
		n, req, err := d.i.GetReplicas(ctx, obj)
		return replicas{n, req}, err
	})
	r, _ := v.(replicas)
	return r.n, r.req, err
}

// GetDependencies is the Interpreter's, deferred when a webhook answers it.
func (d *Deferred) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, error) {
	op := configv1alpha1.InterpreterOperationInterpretDependency
	if !d.i.Remote(obj.GroupVersionKind(), op) {
		return d.i.GetDependencies(ctx, obj)
	}
	v, err := d.call(op, obj, nil, func(ctx context.Context) (any, error) {
		return d.i.GetDependencies(ctx, obj)
	})
	deps, _ := v.([]configv1alpha1.DependentObjectReference)
	return deps, err
}

// AggregateStatus is the Interpreter's, deferred when a webhook answers
// it.
func (d *Deferred) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	op := configv1alpha1.InterpreterOperationAggregateStatus
	if !d.i.Remote(obj.GroupVersionKind(), op) {
		return d.i.AggregateStatus(ctx, obj, items)
	}
	v, err := d.call(op, obj, items, func(ctx context.Context) (any, error) {
		return d.i.AggregateStatus(ctx, obj, items)
	})
	out, _ := v.(*unstructured.Unstructured)
	return out, err
}

// call returns the answer of the call keyed by op, obj and args if it
// ended, else starts it (unless maxDeferredCalls run) and returns
// ErrPending. fn owns obj: the caller gives a copy.
func (d *Deferred) call(op configv1alpha1.InterpreterOperation, obj *unstructured.Unstructured, args any, fn func(context.Context) (any, error)) (any, error) {
	key, err := callKey(op, obj, args)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if a, ok := d.answers[key]; ok {
		delete(d.answers, key)
		return a.value, a.err
	}
	if d.closed {
		return nil, errors.New("interpreter: closed")
	}
	if d.inflight[key] || len(d.inflight) >= maxDeferredCalls {
		return nil, ErrPending
	}
	d.inflight[key] = true
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		v, err := fn(d.ctx)
		d.done(key, answer{value: v, err: err})
	}()
	return nil, ErrPending
}

// done records an ended call and signals Ready.
func (d *Deferred) done(key string, a answer) {
	d.mu.Lock()
	delete(d.inflight, key)
	d.answers[key] = a
	d.order = append(d.order, key)
	for len(d.answers) > maxDeferredAnswers {
		delete(d.answers, d.order[0])
		d.order = d.order[1:]
	}
	if len(d.order) > 2*maxDeferredAnswers {
		d.order = compactOrder(d.order, d.answers)
	}
	d.mu.Unlock()
	select {
	case d.ready <- struct{}{}:
	default:
	}
}

// compactOrder drops the keys already taken.
func compactOrder(order []string, answers map[string]answer) []string {
	var out []string
	for _, k := range order {
		if _, ok := answers[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// callKey identifies a call by its operation and the content of its
// inputs.
func callKey(op configv1alpha1.InterpreterOperation, obj *unstructured.Unstructured, args any) (string, error) {
	data, err := json.Marshal([]any{op, obj.Object, args})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
