package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// workWait bounds the wait for a work to reach an agent after an Apply.
const workWait = 30 * time.Second

// Work keys of the Deployments of TestAgentsGetTheirWorks.
const (
	keyWeb   = "apps/Deployment/default/web"
	keyAPI   = "apps/Deployment/default/api"
	keyOnlyB = "apps/Deployment/default/only-b"
)

func deploymentYAML(name, image string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default, labels: {app: %[1]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: main, image: "%[2]s"}]}
---
`, name, image, replicas)
}

const policiesYAML = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: both, namespace: default}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  - {apiVersion: apps/v1, kind: Deployment, name: api}
  placement:
    clusterAffinity: {clusterNames: [cluster-a, cluster-b]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: b-only, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: only-b}]
  placement:
    clusterAffinity: {clusterNames: [cluster-b]}
`

// TestAgentsGetTheirWorks: two agents with certificates minted from the
// hub's CA register by connecting; a Deployment duplicated to both reaches
// each, a Deployment for B never reaches A; a change sends only the changed
// work; a reconnect with held versions gets only the difference.
func TestAgentsGetTheirWorks(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	a := dialAdmin(t, dir, h.addr)
	ctx := ctxFor(t)
	agentA, agentB := mintAgent(t, dir, "cluster-a"), mintAgent(t, dir, "cluster-b")
	sa, sb := connectReady(ctx, t, agentA, h.addr, nil), connectReady(ctx, t, agentB, h.addr, nil)
	defer sb.close()
	if len(sa.sync) != 0 || sa.welcome.GetHubIdentity() == "" {
		t.Fatalf("first connect: welcome %v, %d works; want a hub identity and no works", sa.welcome, len(sa.sync))
	}

	a.mustApply(ctx, deploymentYAML("web", "nginx:1.27", 2)+deploymentYAML("api", "api:1", 2)+deploymentYAML("only-b", "b:1", 1)+policiesYAML)
	heldA := receiveWorks(t, sa, keyWeb, keyAPI)
	receiveWorks(t, sb, keyWeb, keyAPI, keyOnlyB)

	// A change of web: A gets web again with a new version, nothing else.
	a.mustApply(ctx, deploymentYAML("web", "nginx:1.28", 2))
	msg, err := sa.next(workWait)
	if err != nil || msg.GetWorkUpsert().GetWorkKey() != keyWeb || msg.GetWorkUpsert().GetVersion() == heldA[keyWeb] {
		t.Fatalf("after changing web, A got %v, %v; want web with a new version", msg, err)
	}
	heldA[keyWeb] = msg.GetWorkUpsert().GetVersion()
	// only-b's change reaching B shows the hub has sent what web's change
	// caused; A must have received nothing more.
	a.mustApply(ctx, deploymentYAML("only-b", "b:2", 1))
	waitUpsert(t, sb, keyOnlyB)
	sa.close()
	for msg := range sa.msgs {
		if msg.GetWorkUpsert() != nil || msg.GetWorkDelete() != nil {
			t.Errorf("A got %v after web's change; want nothing but web", msg)
		}
	}

	// While A is away, api changes. A reconnects holding web (current), api
	// (stale) and a work this hub never rendered: it gets api only, and no
	// deletion of the unknown work.
	a.mustApply(ctx, deploymentYAML("api", "api:2", 2))
	waitUpsert(t, sb, keyAPI)
	held := maps.Clone(heldA)
	held["apps/Deployment/default/ghost"] = "0123"
	sa2 := connectReady(ctx, t, agentA, h.addr, held)
	defer sa2.close()
	if len(sa2.sync) != 1 || sa2.sync[0].GetWorkUpsert().GetWorkKey() != keyAPI || sa2.sync[0].GetWorkUpsert().GetVersion() == heldA[keyAPI] {
		t.Fatalf("reconnect with held versions got %v; want exactly api's new version", sa2.sync)
	}
}

// connectReady connects and sends a heartbeat (which registers the cluster).
func connectReady(ctx context.Context, t *testing.T, ag *testAgent, addr string, held map[string]string) *stream {
	t.Helper()
	s, err := ag.connect(ctx, addr, held)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.heartbeat(); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	return s
}

// receiveWorks reads upserts until the stream holds exactly keys, acking
// each, and fails on any other key. It returns key → version.
func receiveWorks(t *testing.T, s *stream, keys ...string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for len(got) < len(keys) {
		msg, err := s.next(workWait)
		if err != nil {
			t.Fatalf("have %v; want %v: %v", slices.Sorted(maps.Keys(got)), keys, err)
		}
		u := msg.GetWorkUpsert()
		if u == nil || !slices.Contains(keys, u.GetWorkKey()) {
			t.Fatalf("got %v; want only upserts of %v", msg, keys)
		}
		got[u.GetWorkKey()] = u.GetVersion()
		if err := s.ack(u.GetWorkKey(), u.GetVersion()); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// waitUpsert reads until an upsert of key arrives.
func waitUpsert(t *testing.T, s *stream, key string) *agentv1.WorkUpsert {
	t.Helper()
	for {
		msg, err := s.next(workWait)
		if err != nil {
			t.Fatalf("waiting for %s: %v", key, err)
		}
		if u := msg.GetWorkUpsert(); u.GetWorkKey() == key {
			return u
		}
	}
}
