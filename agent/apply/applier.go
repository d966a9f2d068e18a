package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/tetherproj/tether/agent/kube"
	"github.com/tetherproj/tether/agent/state"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Interpreter is what the applier needs of internal/interpreter.
type Interpreter interface {
	HookEnabled(gvk schema.GroupVersionKind, op configv1alpha1.InterpreterOperation) bool
	Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
}

// Config configures an Applier.
type Config struct {
	// RESTConfig reaches the member cluster's API server.
	RESTConfig *rest.Config
	// Interpreter runs Retain; *interpreter.Interpreter satisfies it.
	Interpreter Interpreter
	// CRDTimeout bounds the wait for a new CRD to be Established before
	// its custom resources are applied; zero means DefaultCRDTimeout.
	CRDTimeout time.Duration
	// Registerer, when set, receives the applier's metrics (the objects it
	// deleted and orphaned, metrics.go).
	Registerer prometheus.Registerer
}

// DefaultCRDTimeout is how long Apply waits for a CRD to be Established. An
// API server establishes a CRD within a second or two; the margin is for a
// loaded one. A CRD still not established fails only its CRs (retried).
const DefaultCRDTimeout = 30 * time.Second

// Applier applies works to the member cluster and repairs drift. It
// implements agent/hubclient.Applier. Build it with New; call Run once.
type Applier struct {
	logger     hclog.Logger
	dyn        dynamic.Interface
	kube       *kube.Client // Events, discovery
	mapper     *mapper
	interp     Interpreter
	crdTimeout time.Duration

	watch   *watcher
	changes *notifier
	metrics *metrics
	events  *eventLimiter

	// mu guards held and locks.
	mu sync.Mutex
	// held is the last applied version of every work, by key.
	held map[string]*held
	// locks serializes Apply, Delete and repairs of one work key.
	locks map[string]*sync.Mutex
}

// held is one work as last applied.
type held struct {
	work    state.Work
	objects []object // manifest order
}

// object is one manifest's outcome.
type object struct {
	id         *agentv1.ObjectIdentity
	gvr        schema.GroupVersionResource // zero when not mapped
	namespaced bool
	result     agentv1.ApplyResult
	message    string
	// written is what Tether's last write left, to tell its own writes
	// from drift in informer events.
	written mark
	// labels and annotations are those Tether applied (the manifest's and
	// its ownership marks): drift is a change to one of them, not a key
	// another writer added (a Deployment's revision annotation).
	labels, annotations map[string]string
}

// mark is the resourceVersion and generation an object had after a write;
// zero when nothing was written.
type mark struct {
	rv         string
	generation int64
}

// New returns an Applier for the cluster cfg.RESTConfig reaches.
func New(cfg Config, logger hclog.Logger) (*Applier, error) {
	if cfg.RESTConfig == nil || cfg.Interpreter == nil {
		return nil, errors.New("apply: RESTConfig and Interpreter are required")
	}
	dyn, err := dynamic.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("apply: dynamic client: %w", err)
	}
	kc, err := kube.New(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	if cfg.CRDTimeout == 0 {
		cfg.CRDTimeout = DefaultCRDTimeout
	}
	a := &Applier{
		logger:     logger.Named("apply"),
		dyn:        dyn,
		kube:       kc,
		mapper:     newMapper(kc),
		interp:     cfg.Interpreter,
		crdTimeout: cfg.CRDTimeout,
		changes:    newNotifier(),
		metrics:    newMetrics(cfg.Registerer),
		events:     newEventLimiter(),
		held:       map[string]*held{},
		locks:      map[string]*sync.Mutex{},
	}
	a.watch = newWatcher(dyn, a)
	return a, nil
}

// Run watches what was applied and repairs drift until ctx ends, then
// stops its informers and workers and returns nil once they have exited.
// Apply and Delete work without Run, but nothing is repaired or reported
// as changed.
func (a *Applier) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.watch.run(ctx)
	}()
	go func() {
		defer wg.Done()
		a.changes.pump(ctx)
	}()
	wg.Wait()
	return nil
}

// lock takes the per-key lock and returns its release.
func (a *Applier) lock(key string) func() {
	a.mu.Lock()
	l, ok := a.locks[key]
	if !ok {
		l = &sync.Mutex{}
		a.locks[key] = l
	}
	a.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Apply writes w's objects per w.Options and holds w for drift repair and
// status. It returns an error only when the attempt could not be made (ctx
// ended, or the API server is unreachable); every other failure is in the
// Ack.
func (a *Applier) Apply(ctx context.Context, w state.Work) (*agentv1.Ack, error) {
	defer a.lock(w.Key)()
	return a.applyLocked(ctx, w)
}

func (a *Applier) applyLocked(ctx context.Context, w state.Work) (*agentv1.Ack, error) {
	objs, err := a.applyWork(ctx, w)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	prev := a.held[w.Key]
	a.held[w.Key] = &held{work: w, objects: objs}
	a.mu.Unlock()
	if prev != nil {
		a.prune(ctx, w, prev.objects, objs)
	}
	a.changes.add(w.Key)
	return ackOf(w, objs), nil
}

// applyWork applies every manifest in apply order and returns the results
// in manifest order.
func (a *Applier) applyWork(ctx context.Context, w state.Work) ([]object, error) {
	log := a.logger.With("work", w.Key, "version", w.Version)
	opts := optionsOf(w.Options)
	ms := decode(w.Manifests)
	objs := make([]object, len(ms))
	for _, m := range applyOrder(ms) {
		o, err := a.applyOne(ctx, w, opts, m)
		if err != nil {
			return nil, err
		}
		if o.result != agentv1.ApplyResult_APPLY_RESULT_APPLIED {
			log.Debug("object not applied", "kind", o.id.Kind, "namespace", o.id.Namespace, "name", o.id.Name,
				"result", o.result.String(), "message", o.message)
		}
		objs[m.ordinal] = o
	}
	return objs, nil
}

// ackOf summarizes the per-object results: APPLIED when all applied, else
// FAILED when any failed (the client retries), else CONFLICT.
func ackOf(w state.Work, objs []object) *agentv1.Ack {
	ack := &agentv1.Ack{WorkKey: w.Key, Version: w.Version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}
	var msgs []string
	for _, o := range objs {
		ack.Objects = append(ack.Objects, &agentv1.ObjectResult{Identity: o.id, Result: o.result, Message: o.message})
		switch o.result {
		case agentv1.ApplyResult_APPLY_RESULT_APPLIED:
			continue
		case agentv1.ApplyResult_APPLY_RESULT_FAILED:
			ack.Result = agentv1.ApplyResult_APPLY_RESULT_FAILED
		default:
			if ack.Result == agentv1.ApplyResult_APPLY_RESULT_APPLIED {
				ack.Result = o.result
			}
		}
		msgs = append(msgs, describe(o.id)+": "+o.message)
	}
	ack.Message = strings.Join(msgs, "; ")
	return ack
}

// describe names an object as "Kind namespace/name".
func describe(id *agentv1.ObjectIdentity) string {
	if id.GetKind() == "" {
		return fmt.Sprintf("manifest %d", id.GetOrdinal())
	}
	if id.GetNamespace() == "" {
		return id.GetKind() + " " + id.GetName()
	}
	return id.GetKind() + " " + id.GetNamespace() + "/" + id.GetName()
}

// repair applies the held version of key again (drift). It reports whether
// the work is still held.
func (a *Applier) repair(ctx context.Context, key string) bool {
	defer a.lock(key)()
	a.mu.Lock()
	h := a.held[key]
	a.mu.Unlock()
	if h == nil {
		return false
	}
	if !a.watch.drifts(h.objects) {
		return true // the event was Tether's own write of the version now held; a fight's backoff stands
	}
	ack, err := a.applyLocked(ctx, h.work)
	switch {
	case err != nil:
		a.logger.Warn("drift repair not attempted", "work", key, "error", err)
	case ack.Result != agentv1.ApplyResult_APPLY_RESULT_APPLIED:
		a.logger.Warn("drift repair incomplete", "work", key, "result", ack.Result.String(), "message", ack.Message)
	default:
		a.logger.Info("drift repaired", "work", key, "version", h.work.Version)
	}
	return true
}
