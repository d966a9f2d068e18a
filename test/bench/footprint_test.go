package bench_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/tetherproj/tether/agent/kube"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/kit"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Flags of TestAgentFootprint.
var (
	footprint            = flag.String("footprint", "", "measure one agent's memory and member requests per phase into this directory (heap profiles, footprint.md)")
	footprintDeployments = flag.Int("footprint-deployments", 100, "Deployments of TestAgentFootprint")
	footprintPprof       = flag.Bool("footprint-pprof", true, "run the agent with --pprof-addr and save a heap profile per phase (its sampling costs the agent some memory: false for RSS alone)")
)

// Namespaces of the footprint's two writers in its one member.
const (
	fpNamespace       = "fp"
	fpDirectNamespace = "fp-direct"
	fpReplicas        = 3
	fpIdleSettle      = 20 * time.Second // an idle agent's start-up garbage collected, heartbeats running
)

// TestAgentFootprint measures one tether-agent (--pprof-addr,
// --metrics-addr) on one kit member of 5 kwok nodes through the
// baseline's phases (idle with no works, 100 Deployments created and
// ready, their image updated, deleted): VmRSS and VmHWM per phase, a heap
// profile at each phase's end, and the agent's requests to its member by
// verb and resource (tether_agent_member_requests_total), next to a
// direct client writing the same Deployments. It runs only with
// -footprint DIR: it takes minutes and reports figures, it asserts no
// bound.
func TestAgentFootprint(t *testing.T) {
	if *footprint == "" {
		t.Skip("measurement only: run with -footprint DIR")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	pprofAddr, metricsAddr := "", freeAddr(t)
	agentArgs := []string{"--metrics-addr", metricsAddr}
	if *footprintPprof {
		pprofAddr = freeAddr(t)
		agentArgs = append(agentArgs, "--pprof-addr", pprofAddr)
	}
	spec := kit.Members(1)
	for j := range 5 {
		spec[0].Nodes = append(spec[0].Nodes, kit.NodeSpec{Name: fmt.Sprintf("node-%d", j+1), CPU: "32", Memory: "256Gi", Pods: "110"})
	}
	f, err := fleet.Start(ctx, fleet.Options{Clusters: spec, Dir: filepath.Join(t.TempDir(), "fleet"), BinDir: binDir,
		Logger: kit.TestLogger(t), AgentArgs: agentArgs})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	hub, err := f.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	fp := &fpRun{t: t, dir: *footprint, pprof: pprofAddr, metrics: metricsAddr, n: *footprintDeployments}
	for _, p := range f.Processes() {
		if p.Role == fleet.RoleAgent {
			fp.pid = p.PID
		}
	}
	c := f.Kit.Clusters[0]
	fp.member = kubernetes.NewForConfigOrDie(c.RESTConfig())
	directCfg := c.RESTConfig()
	directCfg.QPS = -1
	directReg := prometheus.NewRegistry()
	kube.NewRequests(directReg).Wrap(directCfg)
	direct := kubernetes.NewForConfigOrDie(directCfg)

	time.Sleep(fpIdleSettle)
	fp.phase(ctx, "idle", func() error { time.Sleep(fpIdleSettle); return nil }, nil)
	fp.tetherPhases(ctx, hub)
	fp.directPhases(ctx, direct, directReg)
	fp.write()
}

// freeAddr is a free loopback address.
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// fpRun is one footprint measurement.
type fpRun struct {
	t               *testing.T
	dir             string
	pprof, metrics  string
	pid, n          int
	member          kubernetes.Interface
	rows            []string
	tetherReq       map[string]map[string]float64 // phase → verb resource → requests
	directReq       map[string]map[string]float64
	tetherPhaseList []string
}

// tetherPhases creates, updates and deletes the Deployments through the
// hub, one Apply each, and waits for each phase in the member.
func (fp *fpRun) tetherPhases(ctx context.Context, hub *fleet.Client) {
	t := fp.t
	if _, err := hub.Apply(ctx, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+fpNamespace+"}\n")); err != nil {
		t.Fatal(err)
	}
	policy := `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: fp, namespace: ` + fpNamespace + `}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
`
	if _, err := hub.Apply(ctx, []byte(policy)); err != nil {
		t.Fatal(err)
	}
	applyAll := func(image string) error {
		for i := range fp.n {
			data, err := json.Marshal(fpDeployment(fpNamespace, i, image))
			if err != nil {
				return err
			}
			if _, err := hub.Apply(ctx, data); err != nil {
				return err
			}
		}
		return nil
	}
	fp.phase(ctx, "tether create", func() error {
		if err := applyAll("nginx:1.25"); err != nil {
			return err
		}
		return fp.wait(ctx, fpNamespace, "nginx:1.25", fp.n)
	}, nil)
	fp.phase(ctx, "tether update", func() error {
		if err := applyAll("nginx:1.27"); err != nil {
			return err
		}
		return fp.wait(ctx, fpNamespace, "nginx:1.27", fp.n)
	}, nil)
	fp.phase(ctx, "tether delete", func() error {
		for i := range fp.n {
			ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: fpNamespace, Name: fpName(i)}
			if _, err := hub.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: ref}); err != nil {
				return err
			}
		}
		return fp.wait(ctx, fpNamespace, "", 0)
	}, nil)
}

// directPhases writes the same Deployments straight into the member, as
// the bench's limit does, counting the direct client's requests.
func (fp *fpRun) directPhases(ctx context.Context, direct kubernetes.Interface, reg *prometheus.Registry) {
	if _, err := direct.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fpDirectNamespace}}, metav1.CreateOptions{}); err != nil {
		fp.t.Fatal(err)
	}
	deps := direct.AppsV1().Deployments(fpDirectNamespace)
	fp.phase(ctx, "direct create", func() error {
		for i := range fp.n {
			if _, err := deps.Create(ctx, fpDeployment(fpDirectNamespace, i, "nginx:1.25"), metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		return fp.wait(ctx, fpDirectNamespace, "nginx:1.25", fp.n)
	}, reg)
	patch := []byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.27"}]`)
	fp.phase(ctx, "direct update", func() error {
		for i := range fp.n {
			if _, err := deps.Patch(ctx, fpName(i), types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
		}
		return fp.wait(ctx, fpDirectNamespace, "nginx:1.27", fp.n)
	}, reg)
	fp.phase(ctx, "direct delete", func() error {
		for i := range fp.n {
			if err := deps.Delete(ctx, fpName(i), metav1.DeleteOptions{}); err != nil {
				return err
			}
		}
		return fp.wait(ctx, fpDirectNamespace, "", 0)
	}, reg)
}

func fpName(i int) string { return fmt.Sprintf("fp-%03d", i) }

func fpDeployment(ns string, i int, image string) *appsv1.Deployment {
	labels := map[string]string{"app": fpName(i)}
	replicas := int32(fpReplicas)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: fpName(i), Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: image}}},
			},
		},
	}
}

// wait polls until ns holds n Deployments, each with image and rolled
// out (every replica updated, ready and available).
func (fp *fpRun) wait(ctx context.Context, ns, image string, n int) error {
	for {
		list, err := fp.member.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		done := 0
		for _, d := range list.Items {
			s := d.Status
			if d.Spec.Template.Spec.Containers[0].Image == image && s.ObservedGeneration == d.Generation &&
				s.UpdatedReplicas == fpReplicas && s.ReadyReplicas == fpReplicas && s.AvailableReplicas == fpReplicas && s.Replicas == fpReplicas {
				done++
			}
		}
		if len(list.Items) == n && done == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %d of %d deployments, %d done: %w", ns, len(list.Items), n, done, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// phase runs one phase: the agent's peak RSS reset, run, then its VmHWM
// and VmRSS, a heap profile, and the requests of the agent (reg nil) or
// the direct client (reg) in the phase.
func (fp *fpRun) phase(ctx context.Context, name string, run func() error, reg *prometheus.Registry) {
	t := fp.t
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", fp.pid), []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
	before := fp.requests(reg)
	start := time.Now()
	if err := run(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	took := time.Since(start)
	after := fp.requests(reg)
	hwm, rss := procKB(t, fp.pid, "VmHWM"), procKB(t, fp.pid, "VmRSS")
	file := strings.ReplaceAll(name, " ", "-")
	if fp.pprof != "" {
		fp.save("heap-"+file+".pb.gz", "http://"+fp.pprof+"/debug/pprof/heap")
	}
	fp.save("metrics-"+file+".txt", "http://"+fp.metrics+"/metrics") // the Go runtime's memory classes among them
	fp.save("smaps-"+file+".txt", "file:///proc/"+strconv.Itoa(fp.pid)+"/smaps_rollup")
	fp.rows = append(fp.rows, fmt.Sprintf("| %s | %.1f s | %.1f | %.1f |", name, took.Seconds(), float64(hwm)/1024, float64(rss)/1024))
	delta := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			delta[k] = d
		}
	}
	if reg == nil {
		if fp.tetherReq == nil {
			fp.tetherReq = map[string]map[string]float64{}
		}
		fp.tetherReq[name] = delta
		fp.tetherPhaseList = append(fp.tetherPhaseList, name)
	} else {
		if fp.directReq == nil {
			fp.directReq = map[string]map[string]float64{}
		}
		fp.directReq[name] = delta
	}
	t.Logf("%s: %.1f s, agent VmHWM %.1f MB, VmRSS %.1f MB, requests %v", name, took.Seconds(), float64(hwm)/1024, float64(rss)/1024, delta)
}

// requests reads tether_agent_member_requests_total from reg, or from the
// agent's /metrics when reg is nil: "verb resource" → count.
func (fp *fpRun) requests(reg *prometheus.Registry) map[string]float64 {
	out := map[string]float64{}
	if reg != nil {
		mfs, err := reg.Gather()
		if err != nil {
			fp.t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				out[labelKey(m.GetLabel())] = m.GetCounter().GetValue()
			}
		}
		return out
	}
	resp, err := http.Get("http://" + fp.metrics + "/metrics")
	if err != nil {
		fp.t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		fp.t.Fatal(err)
	}
	for _, m := range mfs["tether_agent_member_requests_total"].GetMetric() {
		out[labelKey(m.GetLabel())] = m.GetCounter().GetValue()
	}
	return out
}

// labelKey is "verb resource" of a counter's labels.
func labelKey(labels []*dto.LabelPair) string {
	var verb, resource string
	for _, l := range labels {
		switch l.GetName() {
		case "verb":
			verb = l.GetValue()
		case "resource":
			resource = l.GetValue()
		}
	}
	return verb + " " + resource
}

// save writes what url serves (http://, or file:// of a local file) to
// the footprint directory.
func (fp *fpRun) save(name, url string) {
	var body io.ReadCloser
	if path, ok := strings.CutPrefix(url, "file://"); ok {
		f, err := os.Open(path)
		if err != nil {
			fp.t.Fatal(err)
		}
		body = f
	} else {
		resp, err := http.Get(url)
		if err != nil {
			fp.t.Fatal(err)
		}
		body = resp.Body
	}
	defer body.Close()
	out, err := os.Create(filepath.Join(fp.dir, name))
	if err != nil {
		fp.t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, body); err != nil {
		fp.t.Fatal(err)
	}
}

// procKB reads a "Vm…: N kB" line of /proc/PID/status.
func procKB(t *testing.T, pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// write writes footprint.md: the agent's memory per phase and both
// writers' requests per phase.
func (fp *fpRun) write() {
	var b strings.Builder
	fmt.Fprintf(&b, "# Agent footprint: %d Deployments × %d replicas, one member of 5 kwok nodes\n\n", fp.n, fpReplicas)
	b.WriteString("| phase | took | agent VmHWM MB | agent VmRSS MB at end |\n| --- | --- | --- | --- |\n")
	b.WriteString(strings.Join(fp.rows, "\n") + "\n\n")
	b.WriteString("| phase | verb resource | agent | direct |\n| --- | --- | --- | --- |\n")
	for _, name := range fp.tetherPhaseList {
		direct := fp.directReq[strings.Replace(name, "tether", "direct", 1)]
		keys := map[string]bool{}
		for k := range fp.tetherReq[name] {
			keys[k] = true
		}
		for k := range direct {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f |\n", name, k, fp.tetherReq[name][k], direct[k])
		}
	}
	if err := os.WriteFile(filepath.Join(fp.dir, "footprint.md"), []byte(b.String()), 0o644); err != nil {
		fp.t.Fatal(err)
	}
	fp.t.Log("\n" + b.String())
}
