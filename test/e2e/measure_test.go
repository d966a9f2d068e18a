package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Measurement parameters (issue 5): how many Deployments, and how long
// the agents are watched while idle.
const (
	measureDeployments = 100
	measureClusters    = 3
	// idleWindow is long enough to cover three heartbeats (10 s each) and
	// the status reporter's periodic re-reads, short enough for a manual run.
	idleWindow = 30 * time.Second
	// measureWait bounds each phase of the measurement.
	measureWait = 3 * time.Minute
)

// TestMeasure logs what issue 5 asks to measure, asserting no wall time:
// the latency from a client's Apply of a Deployment on the hub to the
// Deployment existing in a member (100 Deployments × 3 clusters, seen
// through a watch on each member's API server), and the agents' (and the
// hub's) resident memory and CPU while idle with 100 works each. It runs
// only with TETHER_E2E_MEASURE=1 (CI does not spend the time).
func TestMeasure(t *testing.T) {
	if os.Getenv("TETHER_E2E_MEASURE") != "1" {
		t.Skip("set TETHER_E2E_MEASURE=1 to measure")
	}
	f := newFixture(t, measureClusters)
	ctx := ctxFor(t)
	var names []string
	for _, c := range f.env.Clusters {
		names = append(names, c.Name)
	}
	f.admin.apply(ctx, duplicatedPolicyYAML("measure", "bench", "measure", names...))

	seen := watchAdded(t, f, "bench=measure")
	applied := make(map[string]time.Time, measureDeployments)
	var rpc []time.Duration
	for i := range measureDeployments {
		name := fmt.Sprintf("bench-%03d", i)
		start := time.Now()
		f.admin.apply(ctx, deploymentYAML(name, "nginx:1.27", 1, "bench", "measure"))
		applied[name] = start
		rpc = append(rpc, time.Since(start))
	}
	var lat []time.Duration
	poll(t, measureWait, "every Deployment in every member", func() (bool, string) {
		got := seen.snapshot()
		if len(got) < measureDeployments*measureClusters {
			return false, fmt.Sprintf("%d of %d", len(got), measureDeployments*measureClusters)
		}
		lat = lat[:0]
		for key, at := range got {
			lat = append(lat, at.Sub(applied[key[strings.IndexByte(key, '/')+1:]]))
		}
		return true, ""
	})
	seen.stop()
	t.Logf("Apply RPC (client, one Deployment each): %s", percentiles(rpc))
	t.Logf("apply → in member (%d Deployments × %d clusters): %s", measureDeployments, measureClusters, percentiles(lat))

	for _, c := range f.env.Clusters {
		poll(t, measureWait, c.Name+": every Deployment ready", func() (bool, string) {
			list, err := c.Clientset().AppsV1().Deployments("default").List(ctx, metav1.ListOptions{LabelSelector: "bench=measure"})
			if err != nil {
				return false, err.Error()
			}
			ready := 0
			for _, d := range list.Items {
				if d.Status.ReadyReplicas == 1 {
					ready++
				}
			}
			return ready == measureDeployments, fmt.Sprintf("%d ready", ready)
		})
	}
	measureIdle(t, f)
}

// measureIdle logs each agent's and the hub's RSS and CPU over idleWindow.
func measureIdle(t *testing.T, f *fixture) {
	t.Helper()
	procs := []*proc{f.hub.proc}
	for _, a := range f.agents {
		procs = append(procs, a.proc)
	}
	hz := clockTicks(t)
	before := make([]int64, len(procs))
	for i, p := range procs {
		before[i] = cpuTicks(t, p.pid())
	}
	time.Sleep(idleWindow) // the measurement window itself, not a condition
	for i, p := range procs {
		used := float64(cpuTicks(t, p.pid())-before[i]) / hz
		t.Logf("idle %s over %s: CPU %.2fs (%.2f%% of a core), %s",
			p.name, idleWindow, used, 100*used/idleWindow.Seconds(), memStatus(t, p.pid()))
	}
}

// times records the first time each key met a condition.
type times struct {
	mu     sync.Mutex // guards at
	at     map[string]time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newTimes(t *testing.T) (*times, context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &times{at: map[string]time.Time{}, cancel: cancel}
	t.Cleanup(r.stop)
	return r, ctx
}

func (r *times) record(key string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.at[key]; !ok {
		r.at[key] = at
	}
}

func (r *times) snapshot() map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(r.at))
	for k, v := range r.at {
		out[k] = v
	}
	return out
}

func (r *times) stop() {
	r.cancel()
	r.wg.Wait()
}

// watchAdded starts a watch of the Deployments matching selector in every
// member; stop ends them.
func watchAdded(t *testing.T, f *fixture, selector string) *times {
	t.Helper()
	a, ctx := newTimes(t)
	for _, c := range f.env.Clusters {
		w, err := c.Clientset().AppsV1().Deployments("default").Watch(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			t.Fatalf("%s: watch deployments: %v", c.Name, err)
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if d, isDep := ev.Object.(*appsv1.Deployment); isDep && ev.Type != watch.Deleted {
						a.record(c.Name+"/"+d.Name, time.Now())
					}
				}
			}
		}()
	}
	return a
}

// percentiles formats p50, p90, p99 and max of ds.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	r := time.Millisecond / 10
	return fmt.Sprintf("n=%d p50=%s p90=%s p99=%s max=%s", len(s), at(0.50).Round(r), at(0.90).Round(r), at(0.99).Round(r), s[len(s)-1].Round(r))
}

// cpuTicks is a process's utime+stime (/proc/PID/stat fields 14 and 15),
// in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The command name (field 2) may hold spaces; fields after it are plain.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(fields[12], 10, 64) // field 15
	return utime + stime
}

// memStatus is a process's VmRSS and VmHWM from /proc/PID/status.
func memStatus(t *testing.T, pid int) string {
	t.Helper()
	return statusLines(t, pid, "VmRSS:", "VmHWM:")
}

// statusLines are the lines of /proc/PID/status that start with one of
// keys, spaces squeezed, joined with ", ".
func statusLines(t *testing.T, pid int, keys ...string) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		for _, k := range keys {
			if strings.HasPrefix(line, k) {
				out = append(out, strings.Join(strings.Fields(line), " "))
			}
		}
	}
	return strings.Join(out, ", ")
}

// clockTicks is the kernel's USER_HZ (getconf CLK_TCK), 100 if unknown.
func clockTicks(t *testing.T) float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	hz, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || hz <= 0 {
		return 100
	}
	return hz
}
