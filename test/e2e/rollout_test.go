package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/tier"
)

// rolloutSoak is the RolloutPolicy's minSuccessTime in these tests.
const rolloutSoak = 5 * time.Second

// TestRolloutSmoke is the default tier's part of the rollout proof: a
// RolloutPolicy is accepted, its template reaches both clusters through
// the gates, and tetherctl rollout status says the rollout is complete.
func TestRolloutSmoke(t *testing.T) {
	f := newFixture(t, 2)
	ctx := ctxFor(t)
	names := []string{f.env.Clusters[0].Name, f.env.Clusters[1].Name}
	f.admin.apply(ctx, rolloutYAML(names))
	f.admin.apply(ctx, deploymentYAML("web", "nginx:1.25", 1))
	for _, c := range f.env.Clusters {
		waitDeployment(t, c, "web", "nginx:1.25 ready", deploymentIs(1, "nginx:1.25", 1))
	}
	poll(t, memberWait, "tetherctl rollout status: Complete", func() (bool, string) {
		out := ctlOut(t, f, "rollout", "status", "deployment/web")
		return strings.Contains(out, "phase: Complete") && strings.Count(out, "Succeeded") == 2, out
	})
	// The template's own status says it too, where kubectl-minded tools look.
	poll(t, memberWait, "the template's rollout condition True", func() (bool, string) {
		c := rolloutCondition(t, f, "web")
		return c["status"] == "True" && c["reason"] == "Complete" && strings.Contains(fmt.Sprint(c["message"]), "succeeded on 2/2 clusters"), fmt.Sprint(c)
	})
}

// rolloutCondition is the rollout condition in the status of Deployment
// name as `tetherctl get -o json` prints it, or nil.
func rolloutCondition(t *testing.T, f *fixture, name string) map[string]any {
	t.Helper()
	var obj struct {
		Status struct {
			Conditions []map[string]any `json:"conditions"`
		} `json:"status"`
	}
	out := ctlOut(t, f, "get", "deployment", name, "-o", "json")
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("tetherctl get deployment %s -o json: %v\n%s", name, err, out)
	}
	for _, c := range obj.Status.Conditions {
		if c["type"] == "rollout.tether.io/Rollout" {
			return c
		}
	}
	return nil
}

// rolloutYAML is a Deployment's PropagationPolicy to every cluster, a
// health rule that calls image nginx:bad Unhealthy, and a Progressive
// RolloutPolicy: one cluster at a time, Healthy rolloutSoak before the
// next, 20 s to get there, no failure tolerated.
func rolloutYAML(clusters []string) string {
	return fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: bad-image-is-unhealthy}
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          if observedObj.spec.template.spec.containers[1].image == "nginx:bad" then return false end
          return observedObj.status ~= nil and observedObj.status.readyReplicas ~= nil and observedObj.status.readyReplicas >= 1
        end
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [%s]}}
---
apiVersion: policy.tether.io/v1alpha1
kind: RolloutPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  rolloutStrategy:
    type: Progressive
    progressive: {maxConcurrency: 1, minSuccessTime: %s, progressDeadline: 20s, maxFailures: 0}
---
`, strings.Join(clusters, ", "), rolloutSoak)
}

// imageSampler reads every member's web Deployment every 200 ms and
// records when each cluster was first seen with each image, and when
// first seen with it and a ready replica.
type imageSampler struct {
	mu    sync.Mutex
	seen  map[string]map[string]time.Time // image → cluster → first seen
	ready map[string]map[string]time.Time // image → cluster → first seen ready
	now   map[string]string               // cluster → image last seen
	seq   map[string][]string             // cluster → images in the order seen
}

func sampleImages(ctx context.Context, clusters []*kit.Cluster) *imageSampler {
	s := &imageSampler{seen: map[string]map[string]time.Time{}, ready: map[string]map[string]time.Time{}, now: map[string]string{}, seq: map[string][]string{}}
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, c := range clusters {
				d, err := c.Clientset().AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					continue
				}
				s.note(c.Name, d.Spec.Template.Spec.Containers[0].Image, d.Status.ReadyReplicas > 0 && d.Status.ObservedGeneration == d.Generation)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *imageSampler) note(cluster, image string, ready bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now[cluster] = image
	if seq := s.seq[cluster]; len(seq) == 0 || seq[len(seq)-1] != image {
		s.seq[cluster] = append(seq, image)
	}
	first(s.seen, image, cluster)
	if ready {
		first(s.ready, image, cluster)
	}
}

// first records now for (image, cluster) unless m has a time already.
func first(m map[string]map[string]time.Time, image, cluster string) {
	if m[image] == nil {
		m[image] = map[string]time.Time{}
	}
	if _, ok := m[image][cluster]; !ok {
		m[image][cluster] = time.Now()
	}
}

// order returns the clusters seen with image, by the time they were.
func (s *imageSampler) order(image string) ([]string, map[string]time.Time, map[string]time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	seen, ready := map[string]time.Time{}, map[string]time.Time{}
	for c, at := range s.seen[image] {
		out = append(out, c)
		seen[c], ready[c] = at, s.ready[image][c]
	}
	sort.Slice(out, func(i, j int) bool { return seen[out[i]].Before(seen[out[j]]) })
	return out, seen, ready
}

// history returns the images cluster was seen with, in order.
func (s *imageSampler) history(cluster string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seq[cluster]...)
}

func (s *imageSampler) images() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for c, img := range s.now {
		out[c] = img
	}
	return out
}

// TestRolloutProgressive is the rollout issue's proof on kit members with
// real agents: a new image reaches three clusters one at a time, each
// only after the one before was Healthy minSuccessTime; a bad image (a
// user health rule calls it Unhealthy) pauses the rollout after the first
// cluster, the other two keeping the image they had, and tetherctl
// rollout status says why; undo brings the previous image back; a hub
// killed (SIGKILL) mid-rollout resumes it at the step it was at; a
// cluster whose agent is stopped is skipped and takes the version the
// rollout reached once its agent is back.
func TestRolloutProgressive(t *testing.T) {
	tier.Long(t, "three rollouts of three clusters, each soaking 5 s")
	f := newFixture(t, 3)
	ctx := ctxFor(t)
	var names []string
	for _, c := range f.env.Clusters {
		names = append(names, c.Name)
	}
	f.admin.apply(ctx, rolloutYAML(names))
	f.admin.apply(ctx, deploymentYAML("web", "nginx:1.25", 1))
	for _, c := range f.env.Clusters {
		waitDeployment(t, c, "web", "nginx:1.25 ready", deploymentIs(1, "nginx:1.25", 1))
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	s := sampleImages(sctx, f.env.Clusters)

	t.Run("OneAtATimeAfterTheSoak", func(t *testing.T) {
		f.admin.apply(ctx, deploymentYAML("web", "nginx:1.26", 1))
		poll(t, 3*memberWait, "every cluster on nginx:1.26", func() (bool, string) {
			got := s.images()
			return got[names[0]] == "nginx:1.26" && got[names[1]] == "nginx:1.26" && got[names[2]] == "nginx:1.26", fmt.Sprint(got)
		})
		order, seen, ready := s.order("nginx:1.26")
		for i := 1; i < len(order); i++ {
			prev, cur := order[i-1], order[i]
			if ready[prev].IsZero() {
				t.Fatalf("%s took nginx:1.26 but was never seen ready with it", prev)
			}
			// One sample of slack: ready is when the sampler saw it.
			if gap := seen[cur].Sub(ready[prev]); gap < rolloutSoak-200*time.Millisecond {
				t.Errorf("%s took nginx:1.26 %s after %s was ready with it; want at least minSuccessTime %s", cur, gap, prev, rolloutSoak)
			}
		}
		t.Logf("nginx:1.26 reached %v at %v (ready %v)", order, seen, ready)
	})

	t.Run("BadImagePausesAfterTheFirstCluster", func(t *testing.T) {
		f.admin.apply(ctx, deploymentYAML("web", "nginx:bad", 1))
		var status string
		poll(t, 2*memberWait, "tetherctl rollout status: Paused", func() (bool, string) {
			status = ctlOut(t, f, "rollout", "status", "deployment/web")
			return strings.Contains(status, "phase: Paused"), status
		})
		if !strings.Contains(status, "maxFailures") {
			t.Errorf("tetherctl rollout status = %q; want it to say the failures paused it", status)
		}
		if c := rolloutCondition(t, f, "web"); c["status"] != "False" || c["reason"] != "Paused" || !strings.Contains(fmt.Sprint(c["message"]), "maxFailures") {
			t.Errorf("the template's rollout condition = %v; want False, Paused, saying why", c)
		}
		// Paused: for two soaks more, nothing else may take the bad image.
		holdUntil := time.Now().Add(2 * rolloutSoak)
		for time.Now().Before(holdUntil) {
			if order, _, _ := s.order("nginx:bad"); len(order) != 1 {
				t.Fatalf("clusters on nginx:bad = %v; want only the first (the rollout is paused)", order)
			}
			time.Sleep(pollInterval)
		}
		order, _, _ := s.order("nginx:bad")
		got := s.images()
		for _, n := range names {
			if n != order[0] && got[n] != "nginx:1.26" {
				t.Errorf("%s image = %s; want nginx:1.26 kept while the rollout is paused", n, got[n])
			}
		}
		t.Logf("paused after %s:\n%s", order[0], status)
	})

	t.Run("UndoRestoresThePreviousImage", func(t *testing.T) {
		ctlOut(t, f, "rollout", "undo", "deployment/web")
		for _, c := range f.env.Clusters {
			waitDeployment(t, c, "web", "nginx:1.26 back", deploymentIs(1, "nginx:1.26", 1))
		}
		poll(t, 2*memberWait, "tetherctl rollout status: Complete", func() (bool, string) {
			out := ctlOut(t, f, "rollout", "status", "deployment/web")
			return strings.Contains(out, "phase: Complete"), out
		})
	})

	t.Run("HubKilledMidRolloutResumesAtTheSameStep", func(t *testing.T) {
		f.admin.apply(ctx, deploymentYAML("web", "nginx:1.27", 1))
		var first string
		poll(t, 2*memberWait, "one cluster on nginx:1.27", func() (bool, string) {
			order, _, _ := s.order("nginx:1.27")
			if len(order) > 0 {
				first = order[0]
			}
			return len(order) == 1, fmt.Sprint(s.images())
		})
		f.hub.kill9()
		f.hub = startHub(t, f.t, f.dataDir, f.hub.addr)
		f.admin = dialAdmin(f.t, f.hub)
		poll(t, 3*memberWait, "every cluster on nginx:1.27", func() (bool, string) {
			got := s.images()
			return got[names[0]] == "nginx:1.27" && got[names[1]] == "nginx:1.27" && got[names[2]] == "nginx:1.27", fmt.Sprint(got)
		})
		order, seen, ready := s.order("nginx:1.27")
		if order[0] != first {
			t.Errorf("after the restart %s took nginx:1.27 first; want %s, taken before the kill", order[0], first)
		}
		for i := 1; i < len(order); i++ {
			if gap := seen[order[i]].Sub(ready[order[i-1]]); gap < rolloutSoak-200*time.Millisecond {
				t.Errorf("%s took nginx:1.27 %s after %s was ready with it; want at least minSuccessTime %s", order[i], gap, order[i-1], rolloutSoak)
			}
		}
		for _, n := range names {
			if h := s.history(n); strings.Count(strings.Join(h, " "), "nginx:1.27") != 1 || h[len(h)-1] != "nginx:1.27" {
				t.Errorf("%s went through images %v; want nginx:1.27 taken once, and kept", n, h)
			}
		}
	})
	t.Run("UnreachableClusterIsSkippedAndCatchesUp", func(t *testing.T) {
		gone, had := f.agents[2], s.images()[names[2]]
		gone.stop()
		f.hub.waitMetric(t, 2*memberWait, `tether_hub_clusters{state="Unknown"}`, 1)
		f.admin.apply(ctx, deploymentYAML("web", "nginx:1.28", 1))
		poll(t, 2*memberWait, "tetherctl rollout status: Complete, one cluster skipped", func() (bool, string) {
			out := ctlOut(t, f, "rollout", "status", "deployment/web")
			return strings.Contains(out, "phase: Complete") && strings.Contains(out, "Skipped"), out
		})
		got := s.images()
		if got[names[0]] != "nginx:1.28" || got[names[1]] != "nginx:1.28" || got[names[2]] != had {
			t.Fatalf("images with %s unreachable = %v; want the other two on nginx:1.28, it on %s", names[2], got, had)
		}
		gone.start(t)
		waitDeployment(t, f.env.Clusters[2], "web", "nginx:1.28 once its agent is back", deploymentIs(1, "nginx:1.28", -1))
	})
}

// ctlOut runs tetherctl in-process as the fixture's admin and returns its
// output, failing the test on a non-zero exit.
func ctlOut(t *testing.T, f *fixture, args ...string) string {
	t.Helper()
	cfg, err := clientconfig.Load(filepath.Join(f.hub.dir, "admin.conf"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server = f.hub.addr
	path := filepath.Join(t.TempDir(), "tether.conf")
	if err := cfg.Write(path); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	if code := ctl.Run(ctx, append([]string{"--config", path}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("tetherctl %s: exit %d: %s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.String()
}

// TestRolloutWindow: a cluster a maintenance window selects (a short cron:
// the first 10 s of every minute) waits, shown as Waiting, until the
// window opens, while the other cluster takes the change at once.
func TestRolloutWindow(t *testing.T) {
	tier.Long(t, "waits up to a minute for a maintenance window")
	f := newFixture(t, 2)
	ctx := ctxFor(t)
	free, store := f.env.Clusters[0], f.env.Clusters[1]
	ctlOut(t, f, "label", "cluster", store.Name, "tier=store")
	f.admin.apply(ctx, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [%s, %s]}}
---
apiVersion: policy.tether.io/v1alpha1
kind: RolloutPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  rolloutStrategy: {type: All}
  windows:
  - clusterSelector: {matchLabels: {tier: store}}
    schedule: "* * * * *"
    duration: 10s
---
`, free.Name, store.Name))
	// Apply outside the window, so that the store cluster has to wait.
	poll(t, time.Minute, "a moment outside the window", func() (bool, string) {
		sec := time.Now().UTC().Second()
		return sec >= 15 && sec <= 40, fmt.Sprint("second ", sec)
	})
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	s := sampleImages(sctx, f.env.Clusters)
	f.admin.apply(ctx, deploymentYAML("web", "nginx:1.25", 1))
	waitDeployment(t, free, "web", "nginx:1.25 at once", deploymentIs(1, "nginx:1.25", -1))
	poll(t, memberWait, "tetherctl rollout status: the store cluster Waiting", func() (bool, string) {
		out := ctlOut(t, f, "rollout", "status", "deployment/web")
		return strings.Contains(out, "Waiting") && s.images()[store.Name] == "", out
	})
	waitDeployment(t, store, "web", "nginx:1.25 once its window opened", deploymentIs(1, "nginx:1.25", -1))
	_, seen, _ := s.order("nginx:1.25")
	if sec := seen[store.Name].UTC().Second(); sec > 12 {
		t.Errorf("%s took nginx:1.25 at second %d of the minute; want within its window (seconds 0-10, and a sample of slack)", store.Name, sec)
	}
}
