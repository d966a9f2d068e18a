package customizations

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// Kinds of config.tether.io this package loads; other kinds of the group
// are ignored.
const (
	KindCustomization = "ResourceInterpreterCustomization"
	KindWebhook       = "ResourceInterpreterWebhookConfiguration"
)

// Target is the interpreter the watcher feeds: internal/interpreter's
// facade implements it.
type Target interface {
	LoadCustomizations(cs []configv1alpha1.ResourceInterpreterCustomization)
	ApplyCustomization(ctx context.Context, c *configv1alpha1.ResourceInterpreterCustomization) error
	RemoveCustomization(name string)
	ApplyWebhookConfiguration(cfg webhook.Configuration) error
	RemoveWebhookConfiguration(name string)
}

// Watcher follows the config group in the replica's view and updates its
// Target.
// After each change it applied, it tells its subscriptions which kinds the
// change concerns (Subscribe).
type Watcher struct {
	view   *view.View
	target Target
	log    hclog.Logger
	feed   feed
	// rics and webhooks are the customizations and webhook configurations
	// applied to target, by name, so that a change or a relist knows what
	// the previous version concerned and a relist can remove the webhook
	// configurations that vanished. Only Run's goroutine touches them.
	rics     map[string]applied
	webhooks map[string]applied
	// synced is closed once the first list is loaded (Synced); loaded says
	// it is. Only Run's goroutine closes it.
	synced chan struct{}
	loaded bool
	// set is what target holds, as agents receive it (set.go).
	set set
}

// applied is the stored version of an object applied to the target and
// the kinds it concerns.
type applied struct {
	modRevision int64
	scope       Scope
	raw         []byte // the stored object, sent to agents
}

// New returns a watcher of the config group in v (which holds
// store.ObjectsPrefix) feeding target.
func New(v *view.View, target Target, logger hclog.Logger) *Watcher {
	return &Watcher{view: v, target: target, log: logger.Named("customizations"),
		rics: map[string]applied{}, webhooks: map[string]applied{}, synced: make(chan struct{})}
}

// Synced is closed once the watcher has loaded what the store held when it
// started: from then on the target interprets with every stored
// customization, so that what is derived with it (works, bindings) need
// not be derived again at start-up.
func (w *Watcher) Synced() <-chan struct{} { return w.synced }

// Subscribe returns a subscription to the scopes of the changes the
// watcher applies from now on (a customization or webhook configuration
// created, changed or deleted, or found different by a relist), each
// handed over once the target has it. The caller closes it.
func (w *Watcher) Subscribe() *Subscription { return w.feed.subscribe() }

// Prefix is the store prefix the watcher follows.
func Prefix() string { return store.ObjectsPrefix + configv1alpha1.GroupName + "/" }

// Run follows the config group in the view until ctx ends, then returns
// nil: a full batch of the view (its first list, or a new list after a
// store failure) loads everything, a change is applied on its own.
func (w *Watcher) Run(ctx context.Context) error {
	return w.view.Each(ctx, func(b view.Batch) { w.take(ctx, b) }, Prefix())
}

// take applies one batch of the view: a full one loads everything, the
// changes of another are applied one by one in key order.
func (w *Watcher) take(ctx context.Context, b view.Batch) {
	if b.Full {
		kvs := make([]store.KV, 0, len(b.Changes))
		for _, c := range b.Changes {
			kvs = append(kvs, w.kvOf(c.Object))
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].Key < kvs[j].Key })
		w.load(kvs)
		return
	}
	sort.Slice(b.Changes, func(i, j int) bool { return b.Changes[i].Key < b.Changes[j].Key })
	for _, c := range b.Changes {
		ev := store.Event{Type: store.EventDelete, KV: store.KV{Key: c.Key}}
		if c.Object != nil {
			ev = store.Event{Type: store.EventPut, KV: w.kvOf(c.Object)}
		}
		w.apply(ctx, ev)
	}
}

// kvOf is the stored form of a view's object, as agents receive it: its
// decoded content encoded again (json.Marshal, as the client API stored
// it, so the same bytes for what it stored); no value when the stored bytes did not decode (the
// watcher then ignores it, as it did bytes it could not decode).
func (w *Watcher) kvOf(o *view.Object) store.KV {
	kv := store.KV{Key: o.Key, Revision: o.Revision, CreateRevision: o.CreateRevision}
	u, ok := o.Value.(*unstructured.Unstructured)
	if o.Err != nil || !ok || u == nil {
		return kv
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		w.log.Warn("stored object does not encode again, ignoring it", "key", o.Key, "error", err)
		return kv
	}
	kv.Value = data
	return kv
}
