package customizations

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

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

func (t *target) ApplyCustomization(_ context.Context, c *configv1alpha1.ResourceInterpreterCustomization) error {
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
