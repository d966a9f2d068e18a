package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/kit"
)

// Parameters of TestMeasureStatusLag: issue 16's baseline workload (100
// Deployments × 3 replicas Duplicated to 3 clusters of 5 kwok nodes).
const (
	lagDeployments = 100
	lagReplicas    = 3
	lagClusters    = 3
	lagNodes       = 5
	// lagListEvery is how often the hub's templates are listed: the
	// resolution of the aggregated-ready times. A list merges every
	// binding into its template, so listing much more often loads the hub
	// being measured. (A Watch of templates does not carry status changes.)
	lagListEvery = 250 * time.Millisecond
)

// TestMeasureStatusLag logs, asserting no wall time, how long after the
// members' own Deployments are ready the hub's templates show the
// aggregated ready (status.readyReplicas = replicas × clusters, read
// through the client API), and each agent's CPU for the create and its
// peak and current RSS. It runs only with TETHER_E2E_MEASURE=1.
func TestMeasureStatusLag(t *testing.T) {
	if os.Getenv("TETHER_E2E_MEASURE") != "1" {
		t.Skip("set TETHER_E2E_MEASURE=1 to measure")
	}
	f := newLagFixture(t)
	ctx := ctxFor(t)
	var names []string
	for _, c := range f.env.Clusters {
		names = append(names, c.Name)
	}
	f.admin.apply(ctx, duplicatedPolicyYAML("lag", "bench", "lag", names...))
	ready := watchReady(t, f, "bench=lag", lagReplicas)
	agg := listAggregated(t, f.admin, lagReplicas*lagClusters)
	hz := clockTicks(t)
	procs := []*proc{f.hub.proc}
	for _, a := range f.agents {
		procs = append(procs, a.proc)
	}
	before := make([]int64, len(procs))
	for i, p := range procs {
		before[i] = cpuTicks(t, p.pid())
	}
	t0 := time.Now()
	var docs strings.Builder
	for i := range lagDeployments {
		docs.WriteString(deploymentYAML(fmt.Sprintf("lag-%03d", i), "nginx:1.25", lagReplicas, "bench", "lag"))
	}
	f.admin.apply(ctx, docs.String())
	poll(t, measureWait, "every template aggregated ready", func() (bool, string) {
		n := len(agg.snapshot())
		return n == lagDeployments, fmt.Sprintf("%d of %d", n, lagDeployments)
	})
	agg.stop()
	ready.stop()
	logLag(t, t0, ready.snapshot(), agg.snapshot())
	logStages(t, f, ready.snapshot(), agg.snapshot())
	for i, p := range procs {
		used := float64(cpuTicks(t, p.pid())-before[i]) / hz
		t.Logf("create: %s CPU %.2fs, %s", p.name, used, memStatus(t, p.pid()))
	}
	measureIdle(t, &fixture{hub: f.hub, agents: f.agents})
	for _, p := range procs {
		t.Logf("%s: %s; last GC (with GODEBUG=gctrace=1): %s", p.name, memSplit(t, p.pid()), lastGC(p))
	}
}

// memSplit is a process's anonymous and file-backed resident memory.
func memSplit(t *testing.T, pid int) string {
	t.Helper()
	return statusLines(t, pid, "RssAnon:", "RssFile:")
}

// lastGC is the last gctrace line in p's log; "" without one.
func lastGC(p *proc) string {
	lines := strings.Split(p.logText(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "gc ") {
			return lines[i]
		}
	}
	return ""
}

// logLag logs the milestones and the per-template lag from the last
// member's ready to the aggregated ready.
func logLag(t *testing.T, t0 time.Time, member, agg map[string]time.Time) {
	t.Helper()
	lastMember := map[string]time.Time{} // template → its last cluster's ready
	var allMember time.Time
	for key, at := range member {
		name := key[strings.IndexByte(key, '/')+1:]
		if at.After(lastMember[name]) {
			lastMember[name] = at
		}
		if at.After(allMember) {
			allMember = at
		}
	}
	var lags []time.Duration
	var allAgg time.Time
	for name, at := range agg {
		lags = append(lags, at.Sub(lastMember[name]))
		if at.After(allAgg) {
			allAgg = at
		}
	}
	t.Logf("all %d member copies ready: %s; all %d templates aggregated ready: %s (%s later)",
		len(member), allMember.Sub(t0).Round(time.Millisecond), len(agg), allAgg.Sub(t0).Round(time.Millisecond),
		allAgg.Sub(allMember).Round(time.Millisecond))
	t.Logf("per template, members' last ready → aggregated ready (list every %s): %s", lagListEvery, percentiles(lags))
}

// logStages splits each template's lag from its last member's ready into
// stages, from the logs: that member's agent sending the report after the
// ready (status reported, trace), the hub writing the binding after that
// (aggregated status written, debug), and the client's list seeing it.
func logStages(t *testing.T, f *fixture, member, agg map[string]time.Time) {
	t.Helper()
	reports := map[string][]time.Time{} // "<cluster>/<name>" → sends
	for _, a := range f.agents {
		for at, fields := range logLines(a.logText(), "status reported") {
			reports[a.cluster.Name+"/"+lastSegment(fields["work"])] = append(reports[a.cluster.Name+"/"+lastSegment(fields["work"])], at)
		}
	}
	writes := map[string][]time.Time{} // name → binding writes
	for at, fields := range logLines(f.hub.logText(), "aggregated status written") {
		writes[lastSegment(fields["binding"])] = append(writes[lastSegment(fields["binding"])], at)
	}
	var agent, hub, client []time.Duration
	for name, seen := range agg {
		var lastKey string
		var last time.Time
		for key, at := range member {
			if key[strings.IndexByte(key, '/')+1:] == name && at.After(last) {
				lastKey, last = key, at
			}
		}
		sent, ok := firstAfter(reports[lastKey], last)
		if !ok {
			continue
		}
		written, ok := firstAfter(writes[name], sent)
		if !ok {
			continue
		}
		agent, hub, client = append(agent, sent.Sub(last)), append(hub, written.Sub(sent)), append(client, seen.Sub(written))
	}
	t.Logf("stages: member ready → agent report: %s", percentiles(agent))
	t.Logf("stages: agent report → hub binding write: %s", percentiles(hub))
	t.Logf("stages: hub binding write → client list: %s", percentiles(client))
}

// logLines yields the time and key=value fields of the hclog lines of text
// whose message is msg.
func logLines(text, msg string) map[time.Time]map[string]string {
	out := map[time.Time]map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		i := strings.Index(line, ": "+msg+":")
		sp := strings.IndexByte(line, ' ')
		if i < 0 || sp < 0 {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04:05.000Z0700", line[:sp])
		if err != nil {
			continue
		}
		fields := map[string]string{}
		for _, kv := range strings.Fields(line[i+len(msg)+3:]) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				fields[k] = v
			}
		}
		for _, dup := out[at]; dup; _, dup = out[at] {
			at = at.Add(time.Nanosecond) // same millisecond: keep both
		}
		out[at] = fields
	}
	return out
}

func lastSegment(key string) string { return key[strings.LastIndexByte(key, '/')+1:] }

// firstAfter is the earliest of ts not before t.
func firstAfter(ts []time.Time, t time.Time) (time.Time, bool) {
	var best time.Time
	for _, at := range ts {
		if !at.Before(t.Truncate(time.Millisecond)) && (best.IsZero() || at.Before(best)) {
			best = at
		}
	}
	return best, !best.IsZero()
}

// newLagFixture starts lagClusters member clusters of lagNodes nodes, a hub
// and an agent each.
func newLagFixture(t *testing.T) *fixture {
	t.Helper()
	specs := kit.Members(lagClusters)
	for i := range specs {
		for n := range lagNodes {
			specs[i].Nodes = append(specs[i].Nodes, kit.NodeSpec{Name: fmt.Sprintf("node-%d", n+1), CPU: "32", Memory: "256Gi", Pods: "110"})
		}
	}
	env := kit.StartT(t, kit.Options{Clusters: specs})
	f := &fixture{t: t, env: env, dataDir: t.TempDir()}
	f.hub = startHub(t, t, f.dataDir, "127.0.0.1:0")
	f.admin = dialAdmin(t, f.hub)
	for _, c := range env.Clusters {
		a := newAgent(t, t, f.hub, c)
		// Trace: the reporter logs each report it sends (stages below).
		a.proc = startProc(t, a.owner, "tether-agent-"+c.Name, agentBin, "--hub", a.hubAddr,
			"--cert", filepath.Join(a.certs, "tls.crt"), "--key", filepath.Join(a.certs, "tls.key"),
			"--ca", filepath.Join(a.certs, "ca.crt"), "--kubeconfig", c.KubeconfigPath, "--data-dir", a.dataDir,
			"-log-level", "trace")
		f.agents = append(f.agents, a)
	}
	f.hub.waitMetric(t, memberWait, `tether_hub_clusters{state="Ready"}`, lagClusters)
	return f
}

// watchReady records when each member Deployment matching selector is
// first ready: its current generation observed with replicas ready.
func watchReady(t *testing.T, f *fixture, selector string, replicas int32) *times {
	t.Helper()
	r, ctx := newTimes(t)
	for _, c := range f.env.Clusters {
		w, err := c.Clientset().AppsV1().Deployments("default").Watch(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Fatalf("%s: watch deployments: %v", c.Name, err)
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer w.Stop()
			for ev := range w.ResultChan() {
				d, ok := ev.Object.(*appsv1.Deployment)
				if ok && d.Status.ObservedGeneration == d.Generation && d.Status.ReadyReplicas == replicas {
					r.record(c.Name+"/"+d.Name, time.Now())
				}
			}
		}()
	}
	return r
}

// listAggregated lists the hub's Deployments every lagListEvery and
// records when each first shows readyReplicas = want.
func listAggregated(t *testing.T, a *admin, want int64) *times {
	t.Helper()
	r, ctx := newTimes(t)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		tick := time.NewTicker(lagListEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			resp, err := a.objects.List(ctx, &hubv1.ListRequest{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", LabelSelector: "bench=lag", PageSize: 500})
			if err != nil {
				continue // the next tick lists again; the poll's deadline reports a hub that never answers
			}
			now := time.Now()
			for _, o := range resp.GetObjects() {
				u := &unstructured.Unstructured{}
				if u.UnmarshalJSON(o.GetObjectJson()) != nil {
					continue
				}
				if got, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); got == want {
					r.record(u.GetName(), now)
				}
			}
		}
	}()
	return r
}
