package customizations

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
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
	go func() { done <- New(st, tg, hclog.NewNullLogger()).Run(rctx) }()

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
	w := New(st, tg, hclog.NewNullLogger())
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
	w.load(mustList(ctx, t, st))
	if sc := sub.Take(); !sc.Empty() {
		t.Errorf("relist of unchanged objects told %+v; want nothing", sc)
	}
	if _, err := st.Delete(ctx, key(KindCustomization, "first"), 0); err != nil {
		t.Fatal(err)
	}
	w.load(mustList(ctx, t, st))
	if sc := sub.Take(); !sc.Matches(gadget) || sc.Matches(widget) {
		t.Errorf("relist without customization first told %+v; want Gadget only", sc)
	}
}

func kindOf(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: kind}
}

func mustList(ctx context.Context, t *testing.T, st *store.Store) []store.KV {
	t.Helper()
	kvs, _, err := st.List(ctx, Prefix())
	if err != nil {
		t.Fatal(err)
	}
	return kvs
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
