package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// Sizes of TestKill9WhileApplying.
const (
	crashBefore = 50  // Deployments placed before the crash
	crashApply  = 500 // Deployments applied one by one while the hub is killed
	crashAfter  = 150 // acknowledged applies after which the hub is killed
)

const crashPolicy = `apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: both, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [cluster-a, cluster-b]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

// TestKill9WhileApplying: a hub killed with SIGKILL while a client applies
// 500 objects one by one keeps every object it acknowledged; after a
// restart every binding has its placement, the ones placed before the crash
// are not rescheduled, no placement changes while the hub settles, and it
// does settle (a round passes without any binding written).
func TestKill9WhileApplying(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts a hub")
	}
	dir := t.TempDir()
	h := startHub(t, dir)
	var addr atomic.Value
	addr.Store(h.addr)
	current := func() string { return addr.Load().(string) }
	for _, name := range []string{"cluster-a", "cluster-b"} {
		stop := mintAgent(t, dir, name).keepConnected(current, time.Second)
		defer stop()
	}
	ctx := ctxFor(t)
	a := dialAdmin(t, dir, h.addr)
	poll(t, 30*time.Second, "both clusters registered", func() (bool, string) {
		return h.logContains("cluster registered: cluster=cluster-a") && h.logContains("cluster registered: cluster=cluster-b"), ""
	})
	a.mustApply(ctx, crashPolicy)
	for i := range crashBefore {
		a.mustApply(ctx, deploymentYAML(fmt.Sprintf("d-%04d", i), "nginx:1.27", 1))
	}
	before := placements(ctx, t, a, names(0, crashBefore))

	acked := applyAndKill(ctx, t, a, h)
	t.Logf("hub killed with SIGKILL after %d of %d applies were acknowledged", len(acked), crashApply)

	h2 := startHub(t, dir)
	addr.Store(h2.addr)
	a2 := dialAdmin(t, dir, h2.addr)
	stored := listDeployments(ctx, t, a2)
	for _, name := range acked {
		if !slices.Contains(stored, name) {
			t.Errorf("acknowledged Deployment %s is missing after the restart", name)
		}
	}
	t.Logf("after restart: %d Deployments stored (%d before the crash, %d acknowledged during it)", len(stored), crashBefore, len(acked))

	after := placements(ctx, t, a2, stored)
	for name, p := range before {
		if !p.samePlacement(after[name]) {
			t.Errorf("%s: placed %v before the crash, %v after; want it untouched", name, p, after[name])
		}
	}
	settled := settle(ctx, t, a2, stored)
	for name, p := range after {
		if !p.samePlacement(settled[name]) {
			t.Errorf("%s: placed %v after the restart, %v once settled; want no flapping", name, p, settled[name])
		}
	}
}

// settle repeats rounds until no binding was written during one: a round
// applies a marker Deployment and waits for its placement, which the
// detector and the scheduler reach only after what was pending before. A
// hub that flaps never settles.
func settle(ctx context.Context, t *testing.T, a *admin, names []string) map[string]placement {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	prev := placements(ctx, t, a, names)
	for round := 1; ; round++ {
		marker := fmt.Sprintf("marker-%d", round)
		a.mustApply(ctx, deploymentYAML(marker, "nginx:1.27", 1))
		placements(ctx, t, a, []string{marker})
		cur := placements(ctx, t, a, names)
		if maps.Equal(prev, cur) {
			t.Logf("settled after %d round(s): no binding written during the last one", round)
			return cur
		}
		if time.Now().After(deadline) {
			t.Fatalf("bindings still written after %d rounds; the hub does not settle", round)
		}
		prev = cur
	}
}

// applyAndKill applies crashApply Deployments one by one from a goroutine
// and kills the hub once crashAfter were acknowledged; it returns the
// acknowledged names.
func applyAndKill(ctx context.Context, t *testing.T, a *admin, h *hubProc) []string {
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := crashBefore; i < crashBefore+crashApply; i++ {
			name := fmt.Sprintf("d-%04d", i)
			resp, err := a.apply(ctx, deploymentYAML(name, "nginx:1.27", 1))
			if err != nil || !resp.GetCommitted() {
				return
			}
			mu.Lock()
			acked = append(acked, name)
			mu.Unlock()
		}
	}()
	poll(t, 2*time.Minute, fmt.Sprintf("%d applies acknowledged", crashAfter), func() (bool, string) {
		return count() >= crashAfter, fmt.Sprint(count())
	})
	h.kill9()
	wg.Wait()
	if n := count(); n == crashApply {
		t.Fatalf("all %d applies were acknowledged before the kill; the crash came too late to test anything", n)
	}
	return acked
}

// placement is what a placement query says of a template: where it runs,
// when the scheduler last wrote it, and the binding's revision (which also
// moves with status writes).
type placement struct {
	clusters  string
	scheduled time.Time
	revision  int64
}

// samePlacement compares what the scheduler decided and when it wrote it.
func (p placement) samePlacement(q placement) bool {
	return p.clusters == q.clusters && p.scheduled.Equal(q.scheduled)
}

// placements waits until every named Deployment is placed on cluster-a
// and cluster-b and returns each one's placement.
func placements(ctx context.Context, t *testing.T, a *admin, names []string) map[string]placement {
	t.Helper()
	out := make(map[string]placement, len(names))
	for _, name := range names {
		poll(t, time.Minute, name+" placed on cluster-a and cluster-b", func() (bool, string) {
			p, err := a.placement(ctx, deployment(name))
			if err != nil {
				return false, err.Error()
			}
			on := placedOn(p)
			out[name] = placement{clusters: fmt.Sprint(on), scheduled: p.GetScheduleTime().AsTime(), revision: p.GetRevision()}
			return slices.Equal(on, []string{"cluster-a", "cluster-b"}), p.String()
		})
	}
	return out
}

// listDeployments lists the names of every Deployment in default.
func listDeployments(ctx context.Context, t *testing.T, a *admin) []string {
	t.Helper()
	var names []string
	req := &hubv1.ListRequest{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default"}
	for {
		cctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		resp, err := a.objects.List(cctx, req)
		cancel()
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		for _, o := range resp.GetObjects() {
			names = append(names, o.GetRef().GetName())
		}
		if resp.GetNextPageToken() == "" {
			return names
		}
		req.PageToken = resp.GetNextPageToken()
	}
}

func names(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("d-%04d", i))
	}
	return out
}
