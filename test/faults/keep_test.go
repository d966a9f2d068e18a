package faults_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/faults"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// Unknown means keep (issue 34 points 3 and 4): a hub that cannot render
// a work, or serves fewer works than an agent holds, deletes nothing.

const (
	// nginxWorkKey is nginx's work key (hub/render: the template's store
	// key without its prefix).
	nginxWorkKey = "apps/Deployment/default/nginx"
	// panicKeyEnv is hub/render.PanicKeyEnv: in a hub built with -tags
	// renderfault, every render of the work key it names panics.
	panicKeyEnv = "TETHER_RENDER_PANIC_KEY"
	// applyPanicKeyEnv is hub/render.ApplyPanicKeyEnv: in that hub, the
	// renderer panics while it applies each stored object whose key ends
	// with its value (nginx's template and binding for nginxWorkKey).
	applyPanicKeyEnv = "TETHER_APPLY_PANIC_KEY"
	// renderFaultTag builds that hub.
	renderFaultTag = "renderfault"
	// panicHold is how long the members are watched while nginx's render
	// panics, once every agent has synced with the hub: a lease period
	// (40 s) would add nothing, the agents decide at SyncDone.
	panicHold = 30 * time.Second
)

// renderPanics: the hub restarts with nginx's render panicking (its
// first render after the restart, so nothing of nginx is published). It
// must vouch for nginx where it may be and not be authoritative there:
// every agent syncs with it and keeps nginx. Then the hub restarts
// without the fault and the members are as before, nginx with its UIDs.
func renderPanics(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	synced := x.syncCounts()
	t.Setenv(panicKeyEnv, nginxWorkKey) // the restarted hub inherits it
	if err := x.fleet.Restart(ctx, fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
	x.waitHubLog(ctx, "renderfault: the render of "+nginxWorkKey)
	x.waitSynced(ctx, synced)
	r.hold(panicHold)
	t.Setenv(panicKeyEnv, "")
	if err := x.fleet.Restart(ctx, fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
	r.healed()
	r.converge()
	r.finish()
}

// applyPanics: the hub restarts and panics while it applies nginx's
// stored template and binding from its list, so nginx is unknown to it,
// neither present nor absent. It must not be authoritative: every agent
// syncs with it and keeps nginx. Then the hub restarts without the fault
// and the members are as before, nginx with its UIDs. Before, the panic
// skipped the objects and the agents deleted nginx at their SyncDone.
func applyPanics(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	synced := x.syncCounts()
	t.Setenv(applyPanicKeyEnv, nginxWorkKey) // the restarted hub inherits it
	if err := x.fleet.Restart(ctx, fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
	x.waitHubLog(ctx, "renderfault: applying ")
	x.waitSynced(ctx, synced)
	r.hold(panicHold)
	t.Setenv(applyPanicKeyEnv, "")
	if err := x.fleet.Restart(ctx, fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
	r.healed()
	r.converge()
	r.finish()
}

const (
	// limitedCount Deployments go to every member before the hub restarts
	// with --max-works-per-cluster lowLimit: with the examples' two works,
	// each member holds limitedCount+2, more than twice the limit.
	limitedCount = 8
	lowLimit     = 4
	// limitHold is how long the members are watched after the agents
	// synced with the restarted hub: the 75 s after which the issue found
	// half of them deleted.
	limitHold = 75 * time.Second
)

func limitedName(i int) string { return fmt.Sprintf("faults-lim-%d", i) }

// limitedTracked are worksLimitLowered's Deployments, for the watcher.
func limitedTracked() []faults.Tracked {
	out := make([]faults.Tracked, limitedCount)
	for i := range out {
		out[i] = faults.Tracked{Resource: deployments, Namespace: "default", Name: limitedName(i)}
	}
	return out
}

// limitedDeployments are limitedCount Deployments Duplicated to every
// member by one policy.
func limitedDeployments() []byte {
	var b strings.Builder
	for i := range limitedCount {
		fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, labels: {faults: limited}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: "busybox:1.36"}]}
---
`, limitedName(i))
	}
	b.WriteString(`apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: faults-limited}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {faults: limited}}}]
  placement: {replicaScheduling: {replicaSchedulingType: Duplicated}}
`)
	return []byte(b.String())
}

// worksLimitLowered: every member holds limitedCount Deployments and the
// examples; the hub restarts with a works limit below that. The stream
// withholds the excess: every member keeps every object (the same keys,
// the same UIDs) through limitHold and the settle after it.
func worksLimitLowered(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if _, err := x.client.Apply(ctx, limitedDeployments()); err != nil {
		t.Fatalf("apply the limited Deployments: %v", err)
	}
	x.waitWatched(ctx, limitedTracked())
	r := x.begin(t.Name())
	synced := x.syncCounts()
	if err := x.fleet.RestartWith(ctx, fleet.RoleHub, "hub", "--max-works-per-cluster", strconv.Itoa(lowLimit)); err != nil {
		t.Fatal(err)
	}
	x.waitSynced(ctx, synced)
	r.hold(limitHold)
	r.healed()
	r.converge() // the same object keys in every member as before the restart
	r.finish()
}

// waitWatched waits until the watcher sees every object of objs in every
// member.
func (x *fixture) waitWatched(ctx context.Context, objs []faults.Tracked) {
	err := proc.Poll(ctx, time.Second, func(context.Context) error {
		snap := x.watch.Snapshot()
		for _, c := range x.names {
			for _, o := range objs {
				if _, ok := snap[faults.Object{Cluster: c, Resource: o.Resource, Namespace: o.Namespace, Name: o.Name}]; !ok {
					return fmt.Errorf("%s: no %s %s", c, o.Resource.Resource, o.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		x.t.Fatalf("objects not in every member: %v", err)
	}
}

// syncedLine is what an agent logs at each SyncDone (agent/hubclient).
const syncedLine = "synced with the hub"

// syncCounts returns how many SyncDones each agent has logged so far.
func (x *fixture) syncCounts() map[string]int {
	out := map[string]int{}
	for _, p := range x.fleet.Processes() {
		if p.Role == fleet.RoleAgent {
			out[p.Name] = countInFile(p.LogPath, syncedLine)
		}
	}
	return out
}

// waitSynced waits until every agent has logged a SyncDone more than in
// before: it has synced with the restarted hub and acted on its key set.
func (x *fixture) waitSynced(ctx context.Context, before map[string]int) {
	err := proc.Poll(ctx, time.Second, func(context.Context) error {
		for name, n := range x.syncCounts() {
			if n <= before[name] {
				return fmt.Errorf("agent %s has not synced with the restarted hub", name)
			}
		}
		return nil
	})
	if err != nil {
		x.t.Fatal(err)
	}
}

// waitHubLog waits until the hub's log holds s.
func (x *fixture) waitHubLog(ctx context.Context, s string) {
	err := proc.Poll(ctx, time.Second, func(context.Context) error {
		for _, p := range x.fleet.Processes() {
			if p.Role == fleet.RoleHub && countInFile(p.LogPath, s) > 0 {
				return nil
			}
		}
		return fmt.Errorf("the hub's log has no %q", s)
	})
	if err != nil {
		x.t.Fatal(err)
	}
}

// countInFile counts the lines of path holding s (0 when it cannot be
// read).
func countInFile(path, s string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// hubBinDir returns the directory of the binaries a scenario runs:
// binDir, or, with tags, a directory of its own holding a tether-hub
// built with them and binDir's tether-agent.
func hubBinDir(t *testing.T, tags string) string {
	if tags == "" {
		return binDir
	}
	hub := fleet.HubWithTags(t, tags)
	agent, err := filepath.Abs(filepath.Join(binDir, "tether-agent"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(agent, filepath.Join(filepath.Dir(hub), "tether-agent")); err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(hub)
}
