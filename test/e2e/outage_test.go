package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/tier"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// hubOutage is how long the hub stays down in testHubOutage: the issue's
// 60 s. While the hub is down nothing on the agents' side depends on time
// (they keep reconciling what they hold and retry the stream with
// backoff), and the hub's lease clock does not run while the hub is down,
// so no taint or failover can happen whatever the length. What the length
// changes is the agents' reconnect backoff step (1 s doubling: after 60 s
// an agent retries within ~64 s of the hub's return), which resyncWait
// covers.
const hubOutage = 60 * time.Second

// resyncWait bounds the agents' return to a restarted hub: their
// reconnect backoff after hubOutage (see there) plus the resync.
const resyncWait = 90 * time.Second

// Hub metrics counting what the hub sent to agents, per hub process.
const (
	metricUpserts = "tether_hub_work_upserts_sent_total"
	metricDeletes = "tether_hub_work_deletes_sent_total"
)

// testHubOutage: the hub is killed (SIGKILL) for hubOutage. Meanwhile the
// member objects stay as they are; an agent restarted while the hub is
// down keeps its objects and reverts drift, as does the agent that stayed
// up. When the hub returns on the same address, the resync sends only the
// one work that changed while member-1's agent was away.
//
// Counting: the hub's Prometheus counter tether_hub_work_upserts_sent_total
// (hub/metrics.go) counts every WorkUpsert sent on any agent stream and
// starts at zero with each hub process, so after the restart it is exactly
// what the resyncs sent. It is read once both agents logged "synced with
// the hub" (SyncDone follows the initial difference on the stream), and
// again after a later change whose arrival in member-2 bounds anything
// sent late.
func testHubOutage(t *testing.T, f *fixture) {
	tier.Long(t, fmt.Sprintf("the hub is down %s", hubOutage))
	ctx := ctxFor(t)
	m1, m2 := f.env.Clusters[0], f.env.Clusters[1]
	a1, a2 := f.agents[0], f.agents[1]
	uids := memberUIDs(t, f)

	// member-1's agent is away while member-1's image changes on the hub;
	// member-2's work does not change.
	a1.stop()
	f.admin.apply(ctx, imageTagOverrideYAML("web-images", "apps/v1", "Deployment", "web",
		map[string]string{m1.Name: "a2", m2.Name: "b"}))

	down := time.Now()
	f.hub.kill9()
	syncedBefore := a2.count(logSynced)
	a1.start(t) // restarted while the hub is down
	for _, c := range []struct {
		agent *agentProc
		image string
		want  func(*appsv1.Deployment) (bool, string)
	}{
		{a1, "httpd:a", deploymentIs(7, "httpd:a", -1)}, // the version a1 holds
		{a2, "httpd:b", deploymentIs(2, "httpd:b", -1)},
	} {
		cl := c.agent.cluster
		editDeployment(t, cl, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:drift" })
		waitDeployment(t, cl, "web", "drift reverted with the hub down", c.want)
	}
	checkUIDs(t, f, uids)
	time.Sleep(time.Until(down.Add(hubOutage))) // the outage itself, not a condition
	checkUIDs(t, f, uids)
	if !f.hub.exited() {
		t.Fatal("the hub is running during its outage")
	}

	f.hub = startHub(t, f.t, f.dataDir, f.hub.addr)
	poll(t, resyncWait, "both agents synced with the restarted hub", func() (bool, string) {
		n1, n2 := a1.count(logSynced), a2.count(logSynced)
		return n1 >= 1 && n2 > syncedBefore, fmt.Sprintf("member-1 %d, member-2 %d (before %d)", n1, n2, syncedBefore)
	})
	waitDeployment(t, m1, "web", "the change made while its agent was away", deploymentIs(7, "httpd:a2", -1))
	checkCounter(t, f.hub, metricUpserts, 1)

	// A later change for member-2 only: once it is there, anything the
	// resync would have sent late has been sent too.
	f.admin.apply(ctx, imageTagOverrideYAML("web-images", "apps/v1", "Deployment", "web",
		map[string]string{m1.Name: "a2", m2.Name: "b2"}))
	waitDeployment(t, m2, "web", "a change after the resync", deploymentIs(2, "httpd:b2", 2))
	checkCounter(t, f.hub, metricUpserts, 2)
	checkCounter(t, f.hub, metricDeletes, 0)
	checkUIDs(t, f, uids)
}

// testWipedStore: the hub comes back on the same address from an empty
// data directory: a new store, hence a new hub identity, and a new CA (a
// lost disk with nothing backed up). The agents are re-pointed with
// certificates minted from the new CA (they read --ca at start, so they
// restart) and keep every object: the new hub knows no work, and an agent
// holds a hub of another identity not authoritative for it (nothing
// deleted, orphaned or changed; the new hub's new works applied) until the
// operator adopts the old identity's fleet (--adopt-identity). Then the
// old works stay in place, unmanaged, and re-applying the templates on the
// new hub claims the same objects (same UIDs, the retained replicas kept).
func testWipedStore(t *testing.T, f *fixture) {
	ctx := ctxFor(t)
	m1, m2 := f.env.Clusters[0], f.env.Clusters[1]
	uids := memberUIDs(t, f)

	oldIdentity := f.hub.identity(t)
	f.hub.stop() // SIGTERM: agents get Goodbye
	f.dataDir = f.t.TempDir()
	f.hub = startHub(t, f.t, f.dataDir, f.hub.addr)
	identity := f.hub.identity(t)
	if identity == oldIdentity {
		t.Fatalf("the hub on a new data directory kept identity %s; the scenario needs a new one", identity)
	}
	f.admin = dialAdmin(f.t, f.hub)
	for _, a := range f.agents {
		a.stop()
		a.mint(t, f.hub)
		a.start(t)
	}
	poll(t, resyncWait, "both agents synced with the new hub", func() (bool, string) {
		n1, n2 := f.agents[0].count(logSynced), f.agents[1].count(logSynced)
		return n1 >= 1 && n2 >= 1, fmt.Sprintf("member-1 %d, member-2 %d", n1, n2)
	})
	for _, a := range f.agents {
		if !welcomedBy(a.logText(), identity) {
			t.Fatalf("%s was not welcomed by the new hub identity %s:\n%s", a.name, identity, a.tail(20))
		}
	}
	f.hub.waitMetric(t, memberWait, `tether_hub_clusters{state="Ready"}`, 2)
	// A template of the new hub reaching both members shows the agents
	// went through the new hub's SyncDone, where a deletion would happen.
	f.admin.apply(ctx, deploymentYAML("marker", "nginx:1.27", 1)+duplicatedPolicyYAML("marker", "app", "marker", m1.Name, m2.Name))
	for _, c := range f.env.Clusters {
		waitDeployment(t, c, "marker", "the new hub's first work", deploymentIs(1, "nginx:1.27", -1))
	}
	checkUIDs(t, f, uids)
	for _, a := range f.agents {
		for _, line := range []string{logDeleted, logEvicted} {
			if n := a.count(line); n > 0 {
				t.Errorf("%s logged %q %d times; want no deletion", a.name, line, n)
			}
		}
	}
	checkCounter(t, f.hub, metricDeletes, 0)

	// The operator adopts the old hub's fleet.
	f.hub.stop()
	f.hub = startHub(t, f.t, f.dataDir, f.hub.addr, "--adopt-identity", oldIdentity)
	f.admin = dialAdmin(f.t, f.hub)
	poll(t, resyncWait, "both agents synced with the adopting hub", func() (bool, string) {
		n1, n2 := f.agents[0].count(logSynced), f.agents[1].count(logSynced)
		return n1 >= 2 && n2 >= 2, fmt.Sprintf("member-1 %d, member-2 %d", n1, n2)
	})

	// The new hub takes the objects over: same UIDs, member-1's 7 kept.
	f.admin.apply(ctx, webYAML(f, "httpd:2.4", [2]string{"a3", "b3"}, retainReplicasLabel, "true"))
	waitDeployment(t, m1, "web", "claimed by the new hub", deploymentIs(7, "httpd:a3", 7))
	waitDeployment(t, m2, "web", "claimed by the new hub", deploymentIs(2, "httpd:b3", 2))
	waitTemplateStatus(t, f.admin, webRef, "readyReplicas", 9)
	checkUIDs(t, f, uids)
}

// memberUIDs records the UID of every workload the tests put in the
// members so far (web, and cs once the CloneSet step ran).
func memberUIDs(t *testing.T, f *fixture) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, c := range f.env.Clusters {
		d, err := c.Clientset().AppsV1().Deployments("default").Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: deployment web: %v", c.Name, err)
		}
		out[c.Name+"/Deployment/web"] = d.UID
		cs, err := c.Dynamic().Resource(cloneSetGVR).Namespace("default").Get(context.Background(), "cs", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: cloneset cs: %v", c.Name, err)
		}
		out[c.Name+"/CloneSet/cs"] = cs.GetUID()
	}
	return out
}

// checkUIDs fails unless every workload of before still exists with the
// same UID (not deleted, not deleted and re-created).
func checkUIDs(t *testing.T, f *fixture, before map[string]types.UID) {
	t.Helper()
	now := memberUIDs(t, f)
	for _, k := range sortedKeys(before) {
		if now[k] != before[k] {
			t.Errorf("%s: UID %s, was %s; want the same object", k, now[k], before[k])
		}
	}
}

// checkCounter fails unless the hub's counter reads want.
func checkCounter(t *testing.T, h *hubProc, name string, want float64) {
	t.Helper()
	got, err := h.metric(name)
	if err != nil || got != want {
		t.Errorf("hub %s = %v, %v; want %v", name, got, err, want)
	}
}

// welcomedBy tells whether an agent's log has a welcome from the hub
// identity.
func welcomedBy(log, identity string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, logWelcomed+":") && strings.Contains(line, "hub_identity="+identity) {
			return true
		}
	}
	return false
}
