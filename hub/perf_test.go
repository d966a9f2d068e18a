package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
)

// Figures of the baseline create on one in-process hub (issue 16): 100
// Deployments × 3 replicas Duplicated to 3 clusters by one label policy,
// applied one by one while three simulated agents ack and report every
// work, report its replicas getting ready one by one, and heartbeat with a
// resource summary that changes every perfHeartbeat, as while pods start. Run it with
//
//	go test -count=1 -run TestBaselineCreateFigures -v ./hub/ [-cpuprofile cpu.out]
//
// It logs the process's CPU (hub plus the simulated agents; etcd runs in
// its own process), etcd writes per template, works sent per (template,
// cluster), and Apply latency. It asserts that every work arrives and is
// sent once: content that did not change is not sent again. It runs in
// make test (some 15 s).
// TETHER_HUB_PERF_DUMP=<file> appends every stored version of the binding
// of bench-000 to file, to see who writes what.
const (
	perfTemplates = 100
	perfReplicas  = 3
	// perfStatusInterval is the time between two status reports of a
	// work, one more replica ready each (agents report a work at most every
	// 2 s).
	perfStatusInterval = 2 * time.Second
	// perfHeartbeat is the most heartbeats a stream may send
	// (agentapi.DefaultHeartbeatRate); agents send one per 10 s and one
	// per new Settings.
	perfHeartbeat = time.Second
)

var perfClusters = []string{"member1", "member2", "member3"}

func TestBaselineCreateFigures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	st := openStore(t, ctx, e)
	r := runReplica(t, baseConfig(t, e))
	r.serving(t)
	waitLeader(t, ctx, st, r)

	var agents []*perfAgent
	for _, name := range perfClusters {
		a := &perfAgent{name: name, sent: map[string]int{}}
		a.stream = r.openAgent(t, ctx, r.registerAgent(t, ctx, name), &agentv1.Hello{AgentVersion: "test"})
		go a.answer()
		go a.beat(ctx)
		agents = append(agents, a)
	}
	adminTLS, err := r.adminConf(t).TLS()
	if err != nil {
		t.Fatal(err)
	}
	objects := hubv1.NewObjectServiceClient(dial(t, r.addr, adminTLS)) // one connection, as a client keeps
	apply := func(manifests string) time.Duration {
		start := time.Now()
		if _, err := objects.Apply(ctx, &hubv1.ApplyRequest{Manifests: []byte(manifests)}); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		return time.Since(start)
	}
	apply(perfPolicy)
	time.Sleep(2 * time.Second) // the clusters' first heartbeats and API records settle
	rev0 := revision(t, ctx, st)
	wctx, stopWatch := context.WithCancel(ctx)
	events := st.Watch(wctx, "", rev0+1) // every key
	byKind := map[string]int{}
	specs := map[string]string{} // binding key → its last spec and metadata
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		for ev := range events {
			switch {
			case ev.Err != nil:
				byKind["error: "+ev.Err.Error()]++
			case ev.KV.Revision <= rev0:
			case strings.HasPrefix(ev.KV.Key, store.BindingsPrefix):
				kind := "bindings: status only"
				if s := bindingSpec(ev.KV.Value); s != specs[ev.KV.Key] {
					kind, specs[ev.KV.Key] = "bindings: spec or metadata", s
				}
				byKind[kind]++
				if dump := os.Getenv("TETHER_HUB_PERF_DUMP"); dump != "" && strings.HasSuffix(ev.KV.Key, "/bench-000") {
					f, err := os.OpenFile(dump, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
					if err == nil {
						fmt.Fprintf(f, "%d %s\n", ev.KV.Revision, ev.KV.Value)
						f.Close()
					}
				}
			default:
				byKind[writeKind(ev.KV.Key)]++
			}
		}
	}()
	cpu0 := cpuTime()
	t0 := time.Now()
	var lat []time.Duration
	for i := range perfTemplates {
		lat = append(lat, apply(fmt.Sprintf(perfDeployment, i)))
	}
	applied := time.Since(t0)
	for _, a := range agents {
		a.waitWorks(t, ctx, perfTemplates)
	}
	allThere := time.Since(t0)
	cpuAll := cpuTime() - cpu0
	time.Sleep(perfReplicas * perfStatusInterval) // the last reports
	quiet := waitQuiet(t, ctx, st)
	cpuQuiet := cpuTime() - cpu0
	writes := revision(t, ctx, st) - rev0
	stopWatch()
	<-counted
	slices.Sort(lat)
	t.Logf("applied %d templates in %s; Apply p50 %s p99 %s max %s", perfTemplates, applied.Round(time.Millisecond),
		lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*99/100].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	t.Logf("all %d works at the agents after %s; process CPU then %.2f s", perfTemplates*len(agents), allThere.Round(time.Millisecond), cpuAll.Seconds())
	t.Logf("etcd quiet after %s: %d revisions (%.2f per template); process CPU %.2f s", quiet.Round(time.Millisecond), writes, float64(writes)/perfTemplates, cpuQuiet.Seconds())
	var idle []time.Duration
	for i := range 20 {
		idle = append(idle, apply(fmt.Sprintf(perfIdle, i)))
	}
	slices.Sort(idle)
	t.Logf("Apply on the quiet hub (a ConfigMap no policy selects): p50 %s max %s", idle[len(idle)/2].Round(time.Microsecond), idle[len(idle)-1].Round(time.Microsecond))
	t.Logf("etcd keys written, by kind (a transaction may write several): %v", byKind)
	for _, a := range agents {
		a.mu.Lock()
		total := 0
		for _, n := range a.sent {
			total += n
		}
		t.Logf("%s: %d work upserts for %d works", a.name, total, len(a.sent))
		if total != len(a.sent) {
			t.Errorf("%s got %d work upserts for %d works; want each work sent once (a work whose content did not change is not sent again)", a.name, total, len(a.sent))
		}
		a.mu.Unlock()
	}
}

const perfPolicy = `apiVersion: v1
kind: Namespace
metadata: {name: bench}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bench, namespace: bench}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {bench: "true"}}}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

const perfIdle = `apiVersion: v1
kind: ConfigMap
metadata: {name: idle-%02d, namespace: bench}
data: {k: v}
`

const perfDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: bench-%03d, namespace: bench, labels: {bench: "true"}}
spec:
  replicas: 3
  selector: {matchLabels: {app: bench}}
  template:
    metadata: {labels: {app: bench}}
    spec: {containers: [{name: nginx, image: "nginx:1.25"}]}
`

// perfAgent is a simulated agent: it acks and reports every work it is
// sent, applied and Healthy, and heartbeats with a changing summary.
type perfAgent struct {
	name   string
	stream *agentStream
	sendMu sync.Mutex // gRPC streams allow one sender at a time
	mu     sync.Mutex
	sent   map[string]int // work key → upserts received
	err    error          // why the stream ended
}

func (a *perfAgent) send(m *agentv1.AgentMessage) error {
	a.sendMu.Lock()
	defer a.sendMu.Unlock()
	return a.stream.stream.Send(m)
}

func (a *perfAgent) answer() {
	for {
		m, err := a.stream.stream.Recv()
		if err != nil {
			a.mu.Lock()
			a.err = err
			a.mu.Unlock()
			return
		}
		up := m.GetWorkUpsert()
		if up == nil {
			continue
		}
		key, version := up.GetWorkKey(), up.GetVersion()
		a.mu.Lock()
		a.sent[key]++
		a.mu.Unlock()
		ack := &agentv1.AgentMessage{Message: &agentv1.AgentMessage_Ack{Ack: &agentv1.Ack{
			WorkKey: key, Version: version, Result: agentv1.ApplyResult_APPLY_RESULT_APPLIED}}}
		if a.send(ack) != nil {
			return
		}
		for ready := range perfReplicas + 1 {
			time.AfterFunc(time.Duration(ready)*perfStatusInterval, func() { _ = a.send(perfReport(key, version, ready)) })
		}
	}
}

// perfReport is the status report of a Deployment work with ready of its
// perfReplicas replicas ready: Healthy once all are.
func perfReport(key, version string, ready int) *agentv1.AgentMessage {
	name := key[strings.LastIndex(key, "/")+1:]
	health := agentv1.Health_HEALTH_UNHEALTHY
	if ready == perfReplicas {
		health = agentv1.Health_HEALTH_HEALTHY
	}
	status := fmt.Sprintf(`{"replicas":%d,"readyReplicas":%d,"updatedReplicas":%d,"availableReplicas":%d}`, perfReplicas, ready, perfReplicas, ready)
	return &agentv1.AgentMessage{Message: &agentv1.AgentMessage_StatusReport{StatusReport: &agentv1.StatusReport{
		WorkKey: key, Version: version, Digest: fmt.Sprintf("digest-%s-%d", version, ready), Manifests: []*agentv1.ManifestStatus{{
			Identity:   &agentv1.ObjectIdentity{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "bench", Name: name},
			StatusJson: []byte(status), Health: health, Applied: true}}}}}
}

// beat heartbeats every perfHeartbeat, one more pod allocated each time.
func (a *perfAgent) beat(ctx context.Context) {
	tick := time.NewTicker(perfHeartbeat)
	defer tick.Stop()
	for pods := 0; ; pods++ {
		hb := &agentv1.Heartbeat{AgentVersion: "test", KubernetesVersion: "v1.34.0",
			ApiEnablements: []*agentv1.APIEnablement{
				{GroupVersion: "v1", Resources: []*agentv1.APIResource{{Name: "namespaces", Kind: "Namespace"}}},
				{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
			Conditions: []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
			ResourceSummary: &agentv1.ResourceSummary{
				Allocatable: map[string]string{"pods": "550", "cpu": "160", "memory": "1280Gi"},
				Allocated:   map[string]string{"pods": fmt.Sprint(pods % 500)},
			}}
		if a.send(&agentv1.AgentMessage{Message: &agentv1.AgentMessage_Heartbeat{Heartbeat: hb}}) != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// waitWorks polls until the agent got n distinct Deployment works.
func (a *perfAgent) waitWorks(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	for {
		a.mu.Lock()
		got := 0
		for key := range a.sent {
			if strings.HasPrefix(key, "apps/Deployment/") {
				got++
			}
		}
		err := a.err
		a.mu.Unlock()
		if err != nil {
			t.Fatalf("%s: stream ended: %v", a.name, err)
		}
		if got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s got %d of %d works", a.name, got, n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// revision is the store's current revision.
func revision(t *testing.T, ctx context.Context, st *store.Store) int64 {
	t.Helper()
	_, rev, err := st.List(ctx, store.ClustersPrefix)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	return rev
}

// waitQuiet waits until etcd's revision stays put for a second and
// returns how long that took (the second included).
func waitQuiet(t *testing.T, ctx context.Context, st *store.Store) time.Duration {
	t.Helper()
	start, last := time.Now(), revision(t, ctx, st)
	for stable := time.Now(); time.Since(stable) < time.Second; {
		select {
		case <-ctx.Done():
			t.Fatal("etcd never quiet")
		case <-time.After(50 * time.Millisecond):
		}
		if rev := revision(t, ctx, st); rev != last {
			last, stable = rev, time.Now()
		}
	}
	return time.Since(start)
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeKind names a store key by its first segments (/tether/bindings,
// /tether/objects/apps/Deployment...).
func writeKind(key string) string {
	parts := strings.SplitN(key, "/", 6)
	if len(parts) > 3 && parts[2] == "objects" {
		return strings.Join(parts[:min(len(parts), 5)], "/")
	}
	return strings.Join(parts[:min(len(parts), 3)], "/")
}

// bindingSpec is the JSON of a stored binding's spec and metadata.
func bindingSpec(value []byte) string {
	var b struct {
		Metadata json.RawMessage `json:"metadata"`
		Spec     json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(value, &b); err != nil {
		return "undecodable"
	}
	return string(b.Metadata) + string(b.Spec)
}
