package faults_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/faults"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/proc"
)

// startTimeout bounds a fixture's start-up: the fleet (some 15 s on two
// idle cores), the examples' first rollout, with a margin for a loaded
// machine.
const startTimeout = 3 * time.Minute

// The demo's workloads (examples/) that every scenario runs: nginx divided
// over the three clusters, its ConfigMap sent along as a dependency, and
// the per-region OverridePolicies.
var exampleFiles = []string{"examples/nginx.yaml", "examples/overrides.yaml"}

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nginxRef    = &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"}
)

// tracked are the objects the works place in the members: the examples',
// storeRestored's newerPlacement and worksLimitLowered's Deployments.
var tracked = append([]faults.Tracked{
	{Resource: deployments, Namespace: "default", Name: "nginx"},
	{Resource: configMaps, Namespace: "default", Name: "nginx-index"},
	{Resource: configMaps, Namespace: "default", Name: "faults-newer"},
}, limitedTracked()...)

// members are the demo's clusters (test/demo), with the labels its
// examples select on.
func members() []kit.ClusterSpec {
	spec := func(name, region, tier, cpu string) kit.ClusterSpec {
		return kit.ClusterSpec{
			Name:   name,
			Labels: map[string]string{"region": region, "provider": "kwok", "tier": tier},
			Nodes:  []kit.NodeSpec{{Name: name + "-a", CPU: cpu, Memory: "64Gi"}},
		}
	}
	return []kit.ClusterSpec{spec("edge-1", "eu", "edge", "8"), spec("edge-2", "eu", "edge", "16"), spec("regional-1", "us", "regional", "32")}
}

// fixture is one scenario's installation: its network, its fleet with
// the examples applied and rolled out, and a watcher on every member.
type fixture struct {
	t      *testing.T
	net    *faults.Net
	fleet  *fleet.Fleet
	client *fleet.Client
	watch  *faults.Watcher
	names  []string // cluster names

	mu      sync.Mutex               // guards proxies
	proxies map[string]*faults.Proxy // by cluster: the agents' way to their members
}

// setup says what a scenario changes in its fleet.
type setup struct {
	agentArgs, hubArgs []string
	// hubTags, when set, are the build tags of the scenario's own hub
	// binary (hubBinDir); bins is where newFixture put it.
	hubTags string
	bins    string
	// kubelet makes kwok serve the members' kubelet API (logs, exec,
	// port-forward: kit.ClusterSpec.KubeletServer), and the hub its member
	// proxy on the net's ProxyListen.
	kubelet bool
}

// requireNet fails the test when the machine cannot create network
// namespaces and iptables rules: not root, no ip/iptables, or no netns in
// the kernel. It never skips: a fault suite that did not run must not
// read as one that passed. `make test`, `make faults` and .ci/run install
// ip and iptables first (test/faults/netdeps.sh).
func requireNet(t *testing.T) {
	t.Helper()
	if err := faults.Supported(); err != nil {
		t.Fatalf("the fault suite cannot run here: %v", err)
	}
}

// newFixture starts a scenario's installation and registers its teardown.
func newFixture(t *testing.T, s setup) *fixture {
	t.Helper()
	requireNet(t)
	s.bins = hubBinDir(t, s.hubTags) // before the start's clock: a build takes minutes
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	specs := members()
	names := make([]string, len(specs))
	for i := range specs {
		names[i] = specs[i].Name
		specs[i].KubeletServer = s.kubelet
	}
	nw, err := faults.NewNet(names)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nw.Close(); err != nil {
			t.Errorf("remove the scenario's network: %v", err)
		}
	})
	x := &fixture{t: t, net: nw, names: names}
	x.fleet = x.startFleet(ctx, specs, s)
	x.client, err = x.fleet.Client()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.client.Close() })
	x.applyExamples(ctx)
	x.startWatch()
	x.waitBaseline(ctx)
	return x
}

// startFleet starts the hub and the agents in their namespaces, each agent
// reaching its member API server through a Proxy on the host.
func (x *fixture) startFleet(ctx context.Context, specs []kit.ClusterSpec, s setup) *fleet.Fleet {
	t, nw := x.t, x.net
	if s.kubelet {
		s.hubArgs = append(slices.Clip(s.hubArgs), "--proxy-listen", nw.ProxyListen())
	}
	x.proxies = map[string]*faults.Proxy{}
	t.Cleanup(func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		for _, p := range x.proxies {
			p.Close()
		}
	})
	f, err := fleet.Start(ctx, fleet.Options{
		Clusters:  specs,
		Dir:       t.TempDir(),
		HubListen: nw.HubListen(),
		BinDir:    s.bins,
		AgentArgs: s.agentArgs,
		HubArgs:   s.hubArgs,
		Logger:    kit.TestLogger(t),
		Wrap: func(role, name string) []string {
			if role == fleet.RoleHub {
				return faults.Exec(nw.HubNS())
			}
			return faults.Exec(nw.AgentNS(slices.Index(nw.Agents, name)))
		},
		AgentKubeconfig: func(c *kit.Cluster) (string, error) {
			u, err := url.Parse(c.Server)
			if err != nil {
				return "", err
			}
			p, err := faults.NewProxy(nw.MemberAddr(), u.Host)
			if err != nil {
				return "", err
			}
			x.mu.Lock()
			x.proxies[c.Name] = p
			x.mu.Unlock()
			return faults.AgentKubeconfig(c, p.Addr())
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logTails(t, f)
		}
		f.Stop()
	})
	return f
}

// proxy returns the proxy between cluster's agent and its member.
func (x *fixture) proxy(cluster string) *faults.Proxy {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.proxies[cluster]
}

// applyExamples applies the demo's workloads.
func (x *fixture) applyExamples(ctx context.Context) {
	root, err := proc.RepoRoot()
	if err != nil {
		x.t.Fatal(err)
	}
	var all []byte
	for _, name := range exampleFiles {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			x.t.Fatal(err)
		}
		all = append(append(all, b...), "\n---\n"...)
	}
	if _, err := x.client.Apply(ctx, all); err != nil {
		x.t.Fatal(err)
	}
}

// startWatch watches the tracked objects in every member until the test
// ends.
func (x *fixture) startWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	var ms []faults.Member
	for _, c := range x.fleet.Kit.Clusters {
		ms = append(ms, faults.Member{Name: c.Name, Client: c.Dynamic()})
	}
	x.watch = faults.Watch(ctx, ms, tracked)
	x.t.Cleanup(func() {
		cancel()
		x.watch.Wait()
	})
}

// waitBaseline waits until nginx is rolled out on the hub and its objects
// are in the members its placement names.
func (x *fixture) waitBaseline(ctx context.Context) {
	if err := x.client.WaitTemplate(ctx, nginxRef, fleet.Rolled); err != nil {
		x.t.Fatalf("examples not rolled out: %v", err)
	}
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		p, err := x.client.GetPlacement(ctx, nginxRef)
		if err != nil {
			return err
		}
		return placedIn(x.watch.Snapshot(), p)
	})
	if err != nil {
		x.t.Fatalf("examples not in the members: %v", err)
	}
}

// logTails prints the end of the hub's and the agents' logs.
func logTails(t *testing.T, f *fleet.Fleet) {
	for _, p := range f.Processes() {
		if p.Role != fleet.RoleCluster {
			t.Logf("--- last lines of %s ---\n%s", p.LogPath, fleet.LogTail(p.LogPath, 40))
		}
	}
}
