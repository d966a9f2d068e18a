package customizations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/interpreter/webhook"
)

// target records what the watcher told it, as "op name" lines.
type target struct {
	mu  sync.Mutex
	log []string
}

func (t *target) add(s string) { t.mu.Lock(); defer t.mu.Unlock(); t.log = append(t.log, s) }

func (t *target) has(s string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Contains(t.log, s)
}

func (t *target) LoadCustomizations(cs []configv1alpha1.ResourceInterpreterCustomization) {
	for _, c := range cs {
		t.add("load " + c.Name)
	}
}

// ApplyCustomization refuses the customizations named "refused".
func (t *target) ApplyCustomization(_ context.Context, c *configv1alpha1.ResourceInterpreterCustomization) error {
	if c.Name == "refused" {
		return errors.New("refused")
	}
	t.add("apply " + c.Name)
	return nil
}

func (t *target) RemoveCustomization(name string) { t.add("remove " + name) }

func (t *target) ApplyWebhookConfiguration(cfg webhook.Configuration) error {
	t.add("apply-webhook " + cfg.Name)
	return nil
}

func (t *target) RemoveWebhookConfiguration(name string) { t.add("remove-webhook " + name) }

const ric = `{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization",
"metadata":{"name":"%s"},"spec":{"target":{"apiVersion":"example.com/v1","kind":"Widget"},
"customizations":{"replicaResource":{"luaScript":"function GetReplicas(obj) return 1, nil end"}}}}`

const hooks = `{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterWebhookConfiguration",
"metadata":{"name":"hooks"},"webhooks":[{"name":"w.example.com","clientConfig":{"url":"https://w.example.com/interpret"},
"rules":[{"operations":["InterpretHealth"],"apiGroups":["example.com"],"apiVersions":["v1"],"kinds":["Widget"]}],
"interpreterContextVersions":["v1alpha1"]}]}`

// TestWatcherFollowsTheStore: what is stored before Run is loaded, later
// changes are applied and removed one by one.
func TestWatcherFollowsTheStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := func(kind, name string) string {
		return store.ObjectKey(store.ObjectRef{Group: configv1alpha1.GroupName, Kind: kind, Name: name})
	}
	put := func(k, v string) {
		if _, err := st.Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put(key(KindCustomization, "first"), fmt.Sprintf(ric, "first"))

	tg := &target{}
	done := make(chan error, 1)
	rctx, stop := context.WithCancel(ctx)
	v, stopView := runView(t, st)
	defer stopView()
	go func() { done <- New(v, tg, hclog.NewNullLogger()).Run(rctx) }()

	wait(t, tg, "load first")
	put(key(KindCustomization, "second"), fmt.Sprintf(ric, "second"))
	wait(t, tg, "apply second")
	put(key(KindWebhook, "hooks"), hooks)
	wait(t, tg, "apply-webhook hooks")
	for _, k := range []string{key(KindWebhook, "hooks"), key(KindCustomization, "first")} {
		if _, err := st.Delete(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, tg, "remove-webhook hooks")
	wait(t, tg, "remove first")
	stop()
	if err := <-done; err != nil {
		t.Errorf("Run = %v; want nil after cancel", err)
	}
}

func wait(t *testing.T, tg *target, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !tg.has(want) {
		if time.Now().After(deadline) {
			t.Fatalf("target got %v; want %q", tg.log, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ricFor is a customization of kind (example.com/v1).
func ricFor(name, kind string) string {
	return fmt.Sprintf(`{"apiVersion":"config.karmada.io/v1alpha1","kind":"ResourceInterpreterCustomization",
"metadata":{"name":%q},"spec":{"target":{"apiVersion":"example.com/v1","kind":%q},
"customizations":{"replicaResource":{"luaScript":"function GetReplicas(obj) return 1, nil end"}}}}`, name, kind)
}

// TestWatcherTellsWhatAChangeConcerns: a subscription gets, after the
// target has each change, the kinds it concerns: the old and new targets
// of a customization, the rules of a webhook configuration; a refused
// customization concerns nothing, and a relist only what differs.
func TestWatcherTellsWhatAChangeConcerns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := func(kind, name string) string {
		return store.ObjectKey(store.ObjectRef{Group: configv1alpha1.GroupName, Kind: kind, Name: name})
	}
	put := func(k, v string) {
		if _, err := st.Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	widget, gadget, gizmo := kindOf("Widget"), kindOf("Gadget"), kindOf("Gizmo")
	put(key(KindCustomization, "first"), ricFor("first", "Widget"))

	tg := &target{}
	v, stopView := runView(t, st)
	defer stopView()
	w := New(v, tg, hclog.NewNullLogger())
	sub := w.Subscribe()
	defer sub.Close()
	done := make(chan error, 1)
	rctx, stop := context.WithCancel(ctx)
	go func() { done <- w.Run(rctx) }()
	select {
	case <-w.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("Synced not closed within 10s of Run")
	}
	if !tg.has("load first") {
		t.Fatalf("Synced before the target had the stored customization (it has %v)", tg.log)
	}

	steps := []struct {
		name   string
		change func()
		target string // what the target must already have when told
		want   map[schema.GroupVersionKind]bool
	}{
		{"first load", func() {}, "load first", map[schema.GroupVersionKind]bool{widget: true, gadget: false}},
		{"a customization retargeted", func() { put(key(KindCustomization, "first"), ricFor("first", "Gadget")) },
			"apply first", map[schema.GroupVersionKind]bool{widget: true, gadget: true, gizmo: false}},
		{"a refused customization, then another", func() {
			put(key(KindCustomization, "refused"), ricFor("refused", "Widget"))
			put(key(KindCustomization, "second"), ricFor("second", "Gizmo"))
		}, "apply second", map[schema.GroupVersionKind]bool{gizmo: true, widget: false, gadget: false}},
		{"a webhook configuration", func() { put(key(KindWebhook, "hooks"), hooks) },
			"apply-webhook hooks", map[schema.GroupVersionKind]bool{widget: true, gadget: false, gizmo: false}},
		{"a customization deleted", func() {
			if _, err := st.Delete(ctx, key(KindCustomization, "second"), 0); err != nil {
				t.Fatal(err)
			}
		}, "remove second", map[schema.GroupVersionKind]bool{gizmo: true, widget: false, gadget: false}},
		{"a webhook configuration deleted", func() {
			if _, err := st.Delete(ctx, key(KindWebhook, "hooks"), 0); err != nil {
				t.Fatal(err)
			}
		}, "remove-webhook hooks", map[schema.GroupVersionKind]bool{widget: true, gadget: false, gizmo: false}},
	}
	for _, step := range steps {
		step.change()
		sc := waitScope(t, sub)
		if !tg.has(step.target) {
			t.Fatalf("%s: told %+v before the target had %q (it has %v)", step.name, sc, step.target, tg.log)
		}
		for gvk, want := range step.want {
			if got := sc.Matches(gvk); got != want {
				t.Errorf("%s: scope %+v matches %s = %v; want %v", step.name, sc, gvk.Kind, got, want)
			}
		}
	}

	stop()
	if err := <-done; err != nil {
		t.Errorf("Run = %v; want nil after cancel", err)
	}
	// A relist that finds what was applied tells nothing; one that finds
	// a customization gone tells its kind. (A relist loads without
	// validating, so the refused one goes first.)
	if _, err := st.Delete(ctx, key(KindCustomization, "refused"), 0); err != nil {
		t.Fatal(err)
	}
	w.load(relist(ctx, t, st, w))
	if sc := sub.Take(); !sc.Empty() {
		t.Errorf("relist of unchanged objects told %+v; want nothing", sc)
	}
	if _, err := st.Delete(ctx, key(KindCustomization, "first"), 0); err != nil {
		t.Fatal(err)
	}
	w.load(relist(ctx, t, st, w))
	if sc := sub.Take(); !sc.Matches(gadget) || sc.Matches(widget) {
		t.Errorf("relist without customization first told %+v; want Gadget only", sc)
	}
}

func kindOf(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: kind}
}

// relist is what a full batch of the view hands the watcher once the view
// holds the store's last change.
func relist(ctx context.Context, t *testing.T, st *store.Store, w *Watcher) []store.KV {
	t.Helper()
	caughtUp(ctx, t, st, w.view)
	var kvs []store.KV
	for _, o := range w.view.Snapshot(Prefix()).Objects {
		kvs = append(kvs, w.kvOf(o))
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].Key < kvs[j].Key })
	return kvs
}

// caughtUp waits until v holds the store's last change.
func caughtUp(ctx context.Context, t *testing.T, st *store.Store, v *view.View) {
	t.Helper()
	_, rev, err := st.List(ctx, Prefix())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for v.Revision() < rev {
		if time.Now().After(deadline) {
			t.Fatalf("view at revision %d, store at %d", v.Revision(), rev)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runView runs a replica's view of st until stop is called.
func runView(t *testing.T, st *store.Store) (v *view.View, stop func()) {
	t.Helper()
	v, err := view.New(st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	return v, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("view Run = %v; want nil", err)
		}
	}
}

// canonical is the JSON encoding agents receive of a stored object: its
// decoded content encoded again.
func canonical(t *testing.T, s string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// waitScope waits for the subscription's next change and takes it.
func waitScope(t *testing.T, sub *Subscription) Scope {
	t.Helper()
	select {
	case <-sub.Ready():
		return sub.Take()
	case <-time.After(10 * time.Second):
		t.Fatal("no change told within 10s")
		return Scope{}
	}
}

// TestWatcherPublishesTheSetForAgents: the set agents receive is what the
// target holds, versioned by content: a change closes the previous set's
// channel and brings a new version, a relist of unchanged objects does
// not, and removing everything gives the empty set with the empty version.
func TestWatcherPublishesTheSetForAgents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := func(kind, name string) string {
		return store.ObjectKey(store.ObjectRef{Group: configv1alpha1.GroupName, Kind: kind, Name: name})
	}
	put := func(k, v string) {
		if _, err := st.Put(ctx, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	v, stopView := runView(t, st)
	defer stopView()
	w := New(v, &target{}, hclog.NewNullLogger())
	if set, _ := w.Customizations(); set != nil {
		t.Fatalf("Customizations before the first load = %v; want nil", set)
	}
	put(key(KindCustomization, "b"), ricFor("b", "Widget"))
	put(key(KindCustomization, "a"), ricFor("a", "Gadget"))
	caughtUp(ctx, t, st, v) // as a hub's view lists what was stored before it started
	done := make(chan error, 1)
	rctx, stop := context.WithCancel(ctx)
	go func() { done <- w.Run(rctx) }()
	<-w.Synced()
	first, changed := w.Customizations()
	if got := first.GetResourceInterpreterCustomizations(); len(got) != 2 || string(got[0]) != canonical(t, ricFor("a", "Gadget")) || first.GetVersion() == "" {
		t.Fatalf("first set = %d customizations, version %q; want a then b, with a version", len(got), first.GetVersion())
	}

	put(key(KindWebhook, "hooks"), hooks)
	second := waitSet(t, w, changed)
	if len(second.GetWebhookConfigurations()) != 1 || second.GetVersion() == first.GetVersion() {
		t.Fatalf("set after a webhook configuration: %d webhook configurations, version %q (was %q); want 1 and a new version",
			len(second.GetWebhookConfigurations()), second.GetVersion(), first.GetVersion())
	}
	_, changed = w.Customizations()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w.load(relist(ctx, t, st, w))
	select {
	case <-changed:
		t.Fatal("a relist of unchanged objects replaced the set")
	default:
	}
	for _, k := range []string{key(KindCustomization, "a"), key(KindCustomization, "b"), key(KindWebhook, "hooks")} {
		if _, err := st.Delete(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
	}
	w.load(relist(ctx, t, st, w))
	if empty := waitSet(t, w, changed); empty.GetVersion() != "" || len(empty.GetResourceInterpreterCustomizations())+len(empty.GetWebhookConfigurations()) != 0 {
		t.Errorf("set after removing everything = %v; want the empty set, version \"\"", empty)
	}
}

// waitSet waits until changed is closed and returns the new set.
func waitSet(t *testing.T, w *Watcher, changed <-chan struct{}) *agentv1.Customizations {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("set not replaced within 10s")
	}
	set, _ := w.Customizations()
	return set
}

// TestSetOverTheBoundIsNotPublished: a set over MaxSetBytes is not sent;
// agents keep the one they have.
func TestSetOverTheBoundIsNotPublished(t *testing.T) {
	w := New(nil, &target{}, hclog.NewNullLogger())
	w.rics["small"] = applied{raw: []byte(ricFor("small", "Widget"))}
	w.publishSet()
	small, changed := w.Customizations()
	w.rics["big"] = applied{raw: make([]byte, MaxSetBytes)}
	w.publishSet()
	select {
	case <-changed:
		got, _ := w.Customizations()
		t.Fatalf("a set over MaxSetBytes was published (%d customizations)", len(got.GetResourceInterpreterCustomizations()))
	default:
	}
	if got, _ := w.Customizations(); got != small {
		t.Errorf("set after one over the bound = %v; want the previous one", got)
	}
}
