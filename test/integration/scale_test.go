package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/test/tier"
)

// Sizes of TestStorageGrowsWithTemplatesPlusClusters.
const (
	scaleTemplates = 1000
	scaleClusters  = 100
	// applyBatch is how many Deployments one Apply carries.
	applyBatch = 100
)

// TestStorageGrowsWithTemplatesPlusClusters: 1,000 Deployments duplicated
// to 100 clusters store one key per template, binding and cluster, not
// one per (template × cluster) as Karmada's Works would.
func TestStorageGrowsWithTemplatesPlusClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a hub and schedules 1,000 × 100")
	}
	tier.Long(t, "schedules 1,000 templates × 100 clusters")
	dir := t.TempDir()
	// Agents only heartbeat once: a long lease keeps their clusters Ready.
	h := startHub(t, dir, "--lease-duration", "30m", "-log-level", "info")
	a := dialAdmin(t, dir, h.addr)
	ctx := ctxFor(t)
	registerClusters(ctx, t, h, scaleClusters)

	a.mustApply(ctx, `apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: everywhere, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
`)
	start := time.Now()
	for i := 0; i < scaleTemplates; i += applyBatch {
		var b strings.Builder
		for j := i; j < i+applyBatch; j++ {
			b.WriteString(deploymentYAML(fmt.Sprintf("d-%04d", j), "nginx:1.27", 2))
		}
		a.mustApply(ctx, b.String())
	}
	t.Logf("applied %d Deployments in %s", scaleTemplates, time.Since(start).Round(time.Millisecond))
	waitAllPlaced(ctx, t, a, scaleTemplates, scaleClusters, 3*time.Minute)
	t.Logf("all %d bindings scheduled to %d clusters %s after the first Apply", scaleTemplates, scaleClusters, time.Since(start).Round(time.Millisecond))

	h.kill()
	keys, db := storeSize(t, dir)
	limit := int64(2*(scaleTemplates+scaleClusters) + 1)
	t.Logf("etcd: %d keys, db %.1f MiB for %d templates × %d clusters (Karmada would store %d Works); limit %d keys",
		keys, float64(db)/(1<<20), scaleTemplates, scaleClusters, scaleTemplates*scaleClusters, limit)
	if keys >= limit {
		t.Errorf("etcd holds %d keys; want fewer than 2×(templates+clusters)+policies = %d", keys, limit)
	}
}

// registerClusters connects n agents with certificates minted from the
// hub's CA, each heartbeating once, and waits until all are registered.
func registerClusters(ctx context.Context, t *testing.T, h *hubProc, n int) {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(h.dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	agents := make([]*testAgent, n)
	for i := range agents {
		agents[i] = agentFromCA(t, ca, fmt.Sprintf("member-%03d", i))
	}
	streams := make([]*stream, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8) // concurrent handshakes
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s, err := agents[i].connect(ctx, h.addr, nil)
			if err == nil {
				streams[i], err = s, s.heartbeat()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	// The streams stay open until the hub has read every heartbeat.
	defer func() {
		for _, s := range streams {
			if s != nil {
				s.close()
			}
		}
	}()
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	poll(t, 60*time.Second, fmt.Sprintf("%d clusters registered", n), func() (bool, string) {
		data, _ := os.ReadFile(h.log)
		got := strings.Count(string(data), "cluster registered")
		return got == n, fmt.Sprintf("%d registered", got)
	})
}

// waitAllPlaced polls until every d-NNNN Deployment is placed on clusters
// clusters, the last one first.
func waitAllPlaced(ctx context.Context, t *testing.T, a *admin, templates, clusters int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for i := templates - 1; i >= 0; i-- {
		name := fmt.Sprintf("d-%04d", i)
		poll(t, time.Until(deadline), name+" placed on every cluster", func() (bool, string) {
			p, err := a.placement(ctx, deployment(name))
			if err != nil {
				return false, err.Error()
			}
			return len(p.GetClusters()) == clusters, fmt.Sprintf("%d clusters: %s", len(p.GetClusters()), p.GetMessage())
		})
	}
}

// storeSize opens the stopped hub's embedded etcd and measures it.
func storeSize(t *testing.T, dir string) (keys, db int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: dir}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("open the hub's store: %v", err)
	}
	defer st.Close()
	keys, db, err = st.Size(ctx)
	if err != nil {
		t.Fatalf("store size: %v", err)
	}
	return keys, db
}
