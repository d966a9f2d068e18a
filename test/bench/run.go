package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/proc"
)

// Defaults of Config: the baseline's workload and machine.
const (
	DefaultDeployments = 100
	DefaultRuns        = 3
	DefaultClusters    = 3
	DefaultNodes       = 5
	// DefaultPhaseTimeout bounds one phase (create, update or delete) of
	// one run. The baseline's slowest, the update with its rollout, took
	// 112 s for Karmada.
	DefaultPhaseTimeout = 5 * time.Minute
	// settleTimeout bounds the wait between phases for the members' pods
	// to be gone.
	settleTimeout = 3 * time.Minute
	// settlePoll is how often the settling waits look.
	settlePoll = 200 * time.Millisecond
	// idleApplies is how many sequential Applies measure the idle hub's
	// Apply latency before the first run.
	idleApplies = 50
)

// Modes: through our hub and agents, or written straight into the members.
const (
	ModeTether = "tether"
	ModeDirect = "direct"
)

// Phases of a run.
const (
	PhaseCreate = "create"
	PhaseUpdate = "update"
	PhaseDelete = "delete"
)

// Config is one benchmark.
type Config struct {
	Deployments int       // templates per variant; DefaultDeployments if 0
	Runs        int       // runs of each variant and mode; DefaultRuns if 0
	Clusters    int       // member clusters; DefaultClusters if 0
	Nodes       int       // kwok nodes per cluster (32 CPU / 256Gi / 110 pods); DefaultNodes if 0
	Variants    []Variant // Duplicated and Divided if empty
	// Dir receives the fleet (see test/fleet); required.
	Dir string
	// BinDir holds tether-hub and tether-agent (fleet.Options.BinDir).
	BinDir       string
	PhaseTimeout time.Duration // DefaultPhaseTimeout if 0
	// Progress, when set, is called with the results so far after each
	// variant and mode of each run (e.g. to write them out).
	Progress func(*Results) `json:"-"`
	Logger   hclog.Logger   `json:"-"` // nil discards
}

func (c *Config) defaults() {
	if c.Deployments == 0 {
		c.Deployments = DefaultDeployments
	}
	if c.Runs == 0 {
		c.Runs = DefaultRuns
	}
	if c.Clusters == 0 {
		c.Clusters = DefaultClusters
	}
	if c.Nodes == 0 {
		c.Nodes = DefaultNodes
	}
	if len(c.Variants) == 0 {
		c.Variants = []Variant{Duplicated, Divided}
	}
	if c.PhaseTimeout == 0 {
		c.PhaseTimeout = DefaultPhaseTimeout
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
}

// Phase is one measured phase of one run.
type Phase struct {
	Mode, Variant, Phase string
	Run                  int
	// ClientDone is when the client had written everything, from t0.
	ClientDone time.Duration
	Reached    []Reached
	Usage      []Usage
	// MachineBusy is the share (0–1) of the machine's CPU busy in the phase.
	MachineBusy float64
	// HubWrites is the hub store's revision delta over the phase (every
	// etcd write transaction raises it by one); tether mode only.
	HubWrites int64
	// Applies are the client's template Apply (or Delete) latencies.
	Applies []time.Duration
	// Err is why the phase did not complete; the tables leave it out.
	Err string `json:",omitempty"`
}

// Results is a whole benchmark.
type Results struct {
	Config      Config
	Phases      []Phase
	IdleApplies []time.Duration // sequential Applies on the idle hub
	// LoadBefore and LoadAfter are /proc/loadavg at the start and the end.
	LoadBefore, LoadAfter string
	// Failures lists the runs that did not complete; the benchmark cleaned
	// up after each and went on.
	Failures []string `json:",omitempty"`
}

// bench is a running benchmark.
type bench struct {
	cfg      Config
	fleet    *fleet.Fleet
	hub      *fleet.Client
	members  []memberClient
	clusters []string
	procs    []Proc
	tracker  *Tracker
}

// Run starts a fleet, runs the workload cfg describes on it and straight
// into its members, and returns the measurements.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	cfg.defaults()
	if cfg.Dir == "" {
		return nil, fmt.Errorf("bench: Config.Dir is required")
	}
	res := &Results{Config: cfg, LoadBefore: loadavg()}
	f, err := fleet.Start(ctx, fleet.Options{Clusters: clusterSpecs(cfg.Clusters, cfg.Nodes), Dir: cfg.Dir, BinDir: cfg.BinDir, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("start fleet: %w", err)
	}
	defer f.Stop()
	b := &bench{cfg: cfg, fleet: f, tracker: NewTracker()}
	if b.hub, err = f.Client(); err != nil {
		return nil, fmt.Errorf("hub client: %w", err)
	}
	defer b.hub.Close()
	if err := b.setup(ctx); err != nil {
		return nil, err
	}
	w, err := startWatches(ctx, b.tracker, b.members, b.hub.Objects)
	if err != nil {
		return nil, err
	}
	if res.IdleApplies, err = b.idleApplies(ctx); err != nil {
		w.stop()
		return nil, err
	}
	for run := 1; run <= cfg.Runs; run++ {
		for _, v := range cfg.Variants {
			for _, mode := range []string{ModeTether, ModeDirect} {
				phases, err := b.runOnce(ctx, mode, v, run)
				res.Phases = append(res.Phases, phases...)
				if err != nil {
					msg := fmt.Sprintf("run %d, %s %s: %v", run, mode, v.Name, err)
					res.Failures = append(res.Failures, msg)
					cfg.Logger.Error("run failed; cleaning up and going on", "error", msg)
					if err := b.cleanup(ctx, mode); err != nil {
						w.stop()
						return res, fmt.Errorf("%s; clean up: %w", msg, err)
					}
				}
				if cfg.Progress != nil {
					res.LoadAfter = loadavg()
					cfg.Progress(res)
				}
				if err := f.Exited(); err != nil {
					w.stop()
					return res, err
				}
			}
		}
	}
	if err := w.stop(); err != nil {
		return res, err
	}
	res.LoadAfter = loadavg()
	if len(res.Failures) > 0 {
		return res, fmt.Errorf("%d run(s) failed: %s", len(res.Failures), strings.Join(res.Failures, "; "))
	}
	return res, nil
}

// cleanup removes what a failed run left: the templates and the policy on
// the hub, or the Deployments in the members, and waits until no copy and
// no pod is left.
func (b *bench) cleanup(ctx context.Context, mode string) error {
	ns := DirectNamespace
	if mode == ModeTether {
		ns = Namespace
		for i := range b.cfg.Deployments {
			ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: Namespace, Name: DeploymentName(i)}
			if _, err := b.hub.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: ref}); err != nil && status.Code(err) != codes.NotFound {
				return fmt.Errorf("delete %s: %w", fleet.RefString(ref), err)
			}
		}
		ref := &hubv1.ObjectRef{ApiVersion: "policy.karmada.io/v1alpha1", Kind: "PropagationPolicy", Namespace: Namespace, Name: policyName}
		if _, err := b.hub.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: ref}); err != nil && status.Code(err) != codes.NotFound {
			return fmt.Errorf("delete policy: %w", err)
		}
	} else {
		err := b.eachMember(func(m memberClient, i int) error {
			err := m.cs.AppsV1().Deployments(DirectNamespace).Delete(ctx, DeploymentName(i), metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	for _, m := range b.members {
		err := proc.Poll(ctx, settlePoll, func(ctx context.Context) error {
			list, err := m.cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: labelKey + "=" + labelValue, Limit: 1})
			if err != nil {
				return err
			}
			if len(list.Items) > 0 {
				return fmt.Errorf("deployments left, e.g. %s", list.Items[0].Name)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("clean up %s in %s: %w", ns, m.name, err)
		}
	}
	return b.settle(ctx, ns)
}

// clusterSpecs are n members of nodes kwok nodes each, as the baseline's.
func clusterSpecs(n, nodes int) []kit.ClusterSpec {
	specs := kit.Members(n)
	for i := range specs {
		for j := range nodes {
			specs[i].Nodes = append(specs[i].Nodes, kit.NodeSpec{Name: fmt.Sprintf("node-%d", j+1), CPU: "32", Memory: "256Gi", Pods: "110"})
		}
	}
	return specs
}

// setup makes the members' clients, the namespaces (bench through the
// hub, bench-direct straight), and the list of measured processes.
func (b *bench) setup(ctx context.Context) error {
	for _, c := range b.fleet.Kit.Clusters {
		rc := c.RESTConfig()
		rc.QPS = -1 // no client-side throttling, as the baseline's harness
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return fmt.Errorf("client of %s: %w", c.Name, err)
		}
		b.members = append(b.members, memberClient{name: c.Name, cs: cs})
		b.clusters = append(b.clusters, c.Name)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DirectNamespace}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s in %s: %w", DirectNamespace, c.Name, err)
		}
	}
	if _, err := b.hub.Apply(ctx, namespaceYAML()); err != nil {
		return fmt.Errorf("apply namespace %s: %w", Namespace, err)
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	for _, m := range b.members {
		for _, ns := range []string{Namespace, DirectNamespace} {
			err := proc.Poll(ctx, settlePoll, func(ctx context.Context) error {
				_, err := m.cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
				return err
			})
			if err != nil {
				return fmt.Errorf("namespace %s ready in %s: %w", ns, m.name, err)
			}
		}
	}
	for _, p := range b.fleet.Processes() {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", p.PID)); err != nil {
			continue // a process the kit restarted during its start-up
		}
		switch p.Role {
		case fleet.RoleHub:
			b.procs = append(b.procs, Proc{Name: "hub", Group: GroupHub, PID: p.PID})
		case fleet.RoleAgent:
			b.procs = append(b.procs, Proc{Name: "agent " + p.Name, Group: GroupAgent, PID: p.PID})
		default:
			b.procs = append(b.procs, Proc{Name: p.Name + " " + p.Component, Group: GroupMembers, PID: p.PID})
		}
	}
	return nil
}

// idleApplies times sequential Applies of one ConfigMap (which no policy
// selects) on the hub before any workload.
func (b *bench) idleApplies(ctx context.Context) ([]time.Duration, error) {
	var out []time.Duration
	for i := range idleApplies {
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bench-idle-probe, namespace: %s}\ndata: {n: %q}\n", Namespace, fmt.Sprint(i))
		start := time.Now()
		if _, err := b.hub.Apply(ctx, []byte(cm)); err != nil {
			return nil, fmt.Errorf("idle apply: %w", err)
		}
		out = append(out, time.Since(start))
	}
	_, err := b.hub.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: Namespace, Name: "bench-idle-probe"}})
	if err != nil {
		return nil, fmt.Errorf("delete idle probe: %w", err)
	}
	return out, nil
}

// runOnce runs one variant in one mode: create, update (if the variant
// has it), delete, then waits for the members' pods to be gone.
func (b *bench) runOnce(ctx context.Context, mode string, v Variant, run int) ([]Phase, error) {
	n, k := b.cfg.Deployments, len(b.members)
	ns, hub := Namespace, mode == ModeTether
	if !hub {
		ns = DirectNamespace
	}
	type step struct {
		phase string
		ms    []*Milestone
		write func(context.Context) ([]time.Duration, error)
	}
	steps := []step{{PhaseCreate, createMilestones(ns, v, n, k, hub), func(ctx context.Context) ([]time.Duration, error) { return b.create(ctx, mode, v) }}}
	if v.Update {
		steps = append(steps, step{PhaseUpdate, updateMilestones(ns, v, n, k, hub), func(ctx context.Context) ([]time.Duration, error) { return b.update(ctx, mode, v) }})
	}
	steps = append(steps, step{PhaseDelete, deleteMilestones(ns, n, k), func(ctx context.Context) ([]time.Duration, error) { return b.delete(ctx, mode) }})
	var out []Phase
	for _, s := range steps {
		p, err := b.phase(ctx, s.ms, s.write)
		p.Mode, p.Variant, p.Phase, p.Run = mode, v.Name, s.phase, run
		if err != nil {
			p.Err = err.Error()
		}
		out = append(out, p)
		if err != nil {
			return out, fmt.Errorf("%s: %w", s.phase, err)
		}
		b.cfg.Logger.Info("phase done", "run", run, "mode", mode, "variant", v.Name, "phase", s.phase, "milestones", summary(p.Reached))
	}
	if hub {
		if _, err := b.hub.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: &hubv1.ObjectRef{ApiVersion: "policy.karmada.io/v1alpha1", Kind: "PropagationPolicy", Namespace: Namespace, Name: policyName}}); err != nil {
			return out, fmt.Errorf("delete policy: %w", err)
		}
	}
	return out, b.settle(ctx, ns)
}

// phase measures one phase: t0, write, then every milestone reached.
func (b *bench) phase(ctx context.Context, ms []*Milestone, write func(context.Context) ([]time.Duration, error)) (Phase, error) {
	var p Phase
	m, err := startMeter(b.procs)
	if err != nil {
		return p, err
	}
	rev0, err := b.hubRevision(ctx)
	if err != nil {
		return p, err
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.PhaseTimeout)
	defer cancel()
	t0 := b.tracker.Begin(ms)
	p.Applies, err = write(ctx)
	p.ClientDone = time.Since(t0)
	if err != nil {
		return p, err
	}
	werr := b.tracker.Wait(ctx)
	p.Reached = b.tracker.Results()
	if p.Usage, p.MachineBusy, err = m.stop(); err != nil {
		return p, err
	}
	if werr != nil {
		return p, fmt.Errorf("%w; %s", werr, b.placements(context.WithoutCancel(ctx)))
	}
	rev1, err := b.hubRevision(context.WithoutCancel(ctx))
	p.HubWrites = rev1 - rev0
	return p, err
}

// placementsShown bounds how many templates a timeout's error describes.
const placementsShown = 5

// placements describes, for a phase that timed out, the placements of the
// first templates the hub has (if any), to tell a scheduling problem from
// a slow member.
func (b *bench) placements(ctx context.Context) string {
	var out []string
	for i := range b.cfg.Deployments {
		ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: Namespace, Name: DeploymentName(i)}
		pl, err := b.hub.GetPlacement(ctx, ref)
		if err != nil {
			continue // no template: a direct phase, or the delete
		}
		var cls []string
		for _, c := range pl.GetClusters() {
			cls = append(cls, fmt.Sprintf("%s=%d", c.GetCluster(), c.GetReplicas()))
		}
		if len(cls) == len(b.members) && pl.GetScheduled() {
			continue
		}
		out = append(out, fmt.Sprintf("%s: scheduled %t, clusters [%s], message %q", ref.GetName(), pl.GetScheduled(), strings.Join(cls, " "), pl.GetMessage()))
		if len(out) == placementsShown {
			break
		}
	}
	var states []string
	if resp, err := b.hub.Clusters.ListClusters(ctx, &hubv1.ListClustersRequest{}); err == nil {
		for _, c := range resp.GetClusters() {
			var taints []string
			for _, t := range c.GetTaints() {
				taints = append(taints, t.GetKey()+":"+t.GetEffect().String())
			}
			states = append(states, fmt.Sprintf("%s %s taints [%s]", c.GetName(), c.GetState(), strings.Join(taints, " ")))
		}
	}
	return "placements not on every cluster: " + strings.Join(out, "; ") + "; clusters now: " + strings.Join(states, ", ")
}

// hubRevision is the hub store's current revision.
func (b *bench) hubRevision(ctx context.Context) (int64, error) {
	resp, err := b.hub.Objects.List(ctx, &hubv1.ListRequest{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: Namespace, PageSize: 1})
	if err != nil {
		return 0, fmt.Errorf("hub revision: %w", err)
	}
	return resp.GetRevision(), nil
}

// create writes the policy and the templates through the hub, one Apply
// after another, or the member copies straight into every member.
func (b *bench) create(ctx context.Context, mode string, v Variant) ([]time.Duration, error) {
	if mode == ModeTether {
		if _, err := b.hub.Apply(ctx, policyYAML(v, b.clusters)); err != nil {
			return nil, fmt.Errorf("apply policy: %w", err)
		}
		return b.applyTemplates(ctx, v, ImageOld)
	}
	per := v.PerCluster(len(b.members))
	return nil, b.eachMember(func(m memberClient, i int) error {
		d := deployment(DirectNamespace, DeploymentName(i), ImageOld, per)
		_, err := m.cs.AppsV1().Deployments(DirectNamespace).Create(ctx, d, metav1.CreateOptions{})
		return err
	})
}

// update sets the new image: one Apply per template, or one JSON patch
// per member copy.
func (b *bench) update(ctx context.Context, mode string, v Variant) ([]time.Duration, error) {
	if mode == ModeTether {
		return b.applyTemplates(ctx, v, ImageNew)
	}
	return nil, b.eachMember(func(m memberClient, i int) error {
		_, err := m.cs.AppsV1().Deployments(DirectNamespace).Patch(ctx, DeploymentName(i), types.JSONPatchType, imagePatch(), metav1.PatchOptions{})
		return err
	})
}

// delete deletes the templates on the hub, one after another, or the
// member copies straight.
func (b *bench) delete(ctx context.Context, mode string) ([]time.Duration, error) {
	if mode == ModeTether {
		var lat []time.Duration
		for i := range b.cfg.Deployments {
			start := time.Now()
			ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: Namespace, Name: DeploymentName(i)}
			if _, err := b.hub.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: ref}); err != nil {
				return lat, fmt.Errorf("delete %s: %w", fleet.RefString(ref), err)
			}
			lat = append(lat, time.Since(start))
		}
		return lat, nil
	}
	return nil, b.eachMember(func(m memberClient, i int) error {
		return m.cs.AppsV1().Deployments(DirectNamespace).Delete(ctx, DeploymentName(i), metav1.DeleteOptions{})
	})
}

// applyTemplates applies every template with image, one Apply after
// another, and returns each Apply's latency.
func (b *bench) applyTemplates(ctx context.Context, v Variant, img string) ([]time.Duration, error) {
	var lat []time.Duration
	for i := range b.cfg.Deployments {
		data, err := deploymentJSON(Namespace, DeploymentName(i), img, v.Replicas)
		if err != nil {
			return lat, err
		}
		start := time.Now()
		if _, err := b.hub.Apply(ctx, data); err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(start))
	}
	return lat, nil
}

// eachMember runs write for every Deployment index, one after another in
// each member, the members at the same time (as the agents write).
func (b *bench) eachMember(write func(m memberClient, i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	for _, m := range b.members {
		wg.Go(func() {
			for i := range b.cfg.Deployments {
				if err := write(m, i); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s %s: %v", m.name, DeploymentName(i), err))
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("direct writes: %s", strings.Join(errs, "; "))
	}
	return nil
}

// settle waits until no benchmark pod is left in ns in any member, so the
// next phase starts on quiet members.
func (b *bench) settle(ctx context.Context, ns string) error {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	for _, m := range b.members {
		err := proc.Poll(ctx, settlePoll, func(ctx context.Context) error {
			pods, err := m.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return err
			}
			if len(pods.Items) > 0 {
				return fmt.Errorf("pods left, e.g. %s", pods.Items[0].Name)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("settle %s in %s: %w", ns, m.name, err)
		}
	}
	return nil
}

// summary renders milestones as "name=12.3s, …" for the log.
func summary(rs []Reached) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s=%.1fs", r.Name, r.After.Seconds()))
	}
	return strings.Join(parts, ", ")
}

// loadavg is /proc/loadavg's three load averages.
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
