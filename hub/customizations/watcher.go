package customizations

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// Kinds of config.tether.io this package loads; other kinds of the group
// are ignored.
const (
	KindCustomization = "ResourceInterpreterCustomization"
	KindWebhook       = "ResourceInterpreterWebhookConfiguration"
)

// relistBackoff is the pause before listing again after a watch failed for
// another reason than compaction, so that a store outage is not a busy loop.
const relistBackoff = 2 * time.Second

// Target is the interpreter the watcher feeds: internal/interpreter's
// facade implements it.
type Target interface {
	LoadCustomizations(cs []configv1alpha1.ResourceInterpreterCustomization)
	ApplyCustomization(ctx context.Context, c *configv1alpha1.ResourceInterpreterCustomization) error
	RemoveCustomization(name string)
	ApplyWebhookConfiguration(cfg webhook.Configuration) error
	RemoveWebhookConfiguration(name string)
}

// Watcher follows the config group in the store and updates its Target.
// After each change it applied, it tells its subscriptions which kinds the
// change concerns (Subscribe).
type Watcher struct {
	store  *store.Store
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
}

// applied is the stored version of an object applied to the target and
// the kinds it concerns.
type applied struct {
	modRevision int64
	scope       Scope
}

// New returns a watcher of st feeding target.
func New(st *store.Store, target Target, logger hclog.Logger) *Watcher {
	return &Watcher{store: st, target: target, log: logger.Named("customizations"),
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

// Run lists and watches until ctx ends, then returns nil.
func (w *Watcher) Run(ctx context.Context) error {
	return store.Follow(ctx, w.log, relistBackoff, w.session)
}

// session loads everything, then applies changes until the watch ends.
func (w *Watcher) session(ctx context.Context) error {
	kvs, rev, err := w.store.List(ctx, Prefix())
	if err != nil {
		return err
	}
	w.load(kvs)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := w.store.Watch(wctx, Prefix(), rev+1)
	defer func() {
		cancel()
		for range events {
		}
	}()
	for ev := range events {
		if ev.Err != nil {
			return ev.Err
		}
		w.apply(ctx, ev)
	}
	return ctx.Err()
}
