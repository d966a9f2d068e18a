package aggregate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// TestLargeBindingsWrittenLessOften: a binding placed on 300 clusters
// (tens of KiB) is written at most once per flush interval per 16 KiB of
// its encoding, while a binding on one cluster is written at every
// interval. The flush spacing's clock is frozen: a change to the large
// binding waits, however many flush passes run, until it moves on.
func TestLargeBindingsWrittenLessOften(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	clusters := make([]string, 300)
	for i := range clusters {
		clusters[i] = fmt.Sprintf("m%03d", i)
	}
	e.heartbeat(clusters...)
	apiRef := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "api"}
	e.put(store.ObjectKey(webRef), deployment(t).Object)
	e.put(store.ObjectKey(apiRef), deployment(t).Object)
	e.put(store.BindingKey(webRef), webBinding(clusters...))
	api := webBinding(clusters[0])
	api.Name, api.Spec.Resource.Name = "api-deployment", "api"
	e.put(store.BindingKey(apiRef), api)

	var clock atomic.Int64 // Unix ns of the spacing's clock
	clock.Store(t0.UnixNano())
	a := New(e.st, newInterpreter(t), e.leases, Config{Clock: e.clock, View: e.view}, hclog.NewNullLogger())
	a.now = func() time.Time { return time.Unix(0, clock.Load()) }
	e.goRun("relay", a.Relay)
	e.goRun("aggregate", a.Run)

	reportReady := func(key, cluster string, ready int) {
		name := key[len("apps/Deployment/prod/"):]
		r := &agentv1.StatusReport{WorkKey: key, Version: "v1", Digest: fmt.Sprint(ready), Manifests: []*agentv1.ManifestStatus{
			manifest(name, agentv1.Health_HEALTH_HEALTHY, true, memberStatus(ready))}}
		if err := a.Report(ctx, cluster, r); err != nil {
			t.Fatal(err)
		}
	}
	const apiKey = "apps/Deployment/prod/api"
	for _, c := range clusters {
		reportReady(workKey, c, 1)
	}
	reportReady(apiKey, clusters[0], 1)
	// Until every item is in, the spacing's clock runs.
	big := e.waitBinding(webRef, "300 ready replicas", func(b *workv1alpha1.ResourceBinding) bool {
		clock.Add(int64(time.Hour))
		return readyReplicas(b) == 300
	})
	e.waitBinding(apiRef, "api ready", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 1 })
	if n := len(must(json.Marshal(big))); n < 3*flushBytesPerInterval {
		t.Fatalf("the large binding is %d bytes; want at least %d for this test", n, 3*flushBytesPerInterval)
	}

	// The clock stands still from here: the large binding's next write
	// starts its spacing; after it the small binding follows every
	// change and the large one waits.
	reportReady(workKey, clusters[0], 2)
	e.waitBinding(webRef, "readyReplicas 301", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 301 })
	// The store's revisions count the writes: the aggregator's own
	// counter is raised only after its pass's writes all returned, which
	// may be after the test saw them.
	bigRev := e.bindingRevision(webRef)
	for i := 3; i <= 5; i++ {
		reportReady(workKey, clusters[0], i)
		reportReady(apiKey, clusters[0], i)
		e.waitBinding(apiRef, fmt.Sprintf("api readyReplicas %d", i), func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == int64(i) })
	}
	if got := readyReplicas(e.getBinding(webRef)); got != 301 {
		t.Errorf("the large binding was written again within its spacing: readyReplicas %d; want 301 until the spacing passed", got)
	}
	if got := e.bindingRevision(webRef); got != bigRev {
		t.Errorf("the large binding was written within its spacing (revision %d → %d) while the small one followed 3 changes", bigRev, got)
	}
	clock.Add(int64(time.Hour))
	e.waitBinding(webRef, "the large binding written once its spacing passed", func(b *workv1alpha1.ResourceBinding) bool { return readyReplicas(b) == 304 })
}

// TestWithinBudget: a flush pass takes the bindings due longest
// unwritten first, never written first of all, until their sizes reach
// the budget, and always the first one, however large.
func TestWithinBudget(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	due := []dueBinding{
		{key: "a", size: 400, written: at(3)},
		{key: "b", size: 400, written: at(1)},
		{key: "c", size: 100}, // never written
		{key: "d", size: 400, written: at(2)},
		{key: "e", size: 100, written: at(4)},
	}
	for _, c := range []struct {
		budget int
		want   string
	}{
		{1, "c"},
		{500, "b c"},
		{900, "b c d"},
		{1300, "a b c d"},
		{1400, "a b c d e"},
	} {
		if got := strings.Join(withinBudget(slices.Clone(due), c.budget), " "); got != c.want {
			t.Errorf("budget %d: %s; want %s", c.budget, got, c.want)
		}
	}
}
