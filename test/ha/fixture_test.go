package ha_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/faults"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/ha"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/proc"
)

// startTimeout bounds a fixture's start-up: etcd, the kit's clusters (some
// 15 s on two idle cores), three replicas, the agents' registration and
// the baseline's rollout, with a margin for a loaded machine.
const startTimeout = 4 * time.Minute

// replicaCount is how many hub replicas a fixture runs.
const replicaCount = 3

// memberCount is how many member clusters (one agent each) a fixture
// runs: two is the fewest that shows a divided placement.
const memberCount = 2

// options say what a scenario changes in its fixture.
type options struct {
	// hubBin and agentBin are the binaries to start; empty: this tree's.
	hubBin, agentBin string
	// singleHub gives each agent one replica's address (the one of its
	// index), for agents that take no list (the previous release's).
	singleHub bool
	// noRelay: the replicas do not relay agents' statuses to the leader
	// (the previous release's), so the baseline's aggregated status is not
	// waited for until they are replaced.
	noRelay bool
	// netns puts replica 0 in a network namespace (scenario partition).
	netns bool
	// replicas is how many replicas to start (0: replicaCount); noMembers
	// starts no member cluster and no agent (scenario different-ca).
	replicas  int
	noMembers bool
	// load is how many load ConfigMaps the scenario may apply: the watcher
	// tracks them in the members.
	load int
	// hubArgs are flags every replica gets besides the fixture's.
	hubArgs []string
}

// fixture is one scenario's installation: a 3-member etcd cluster over
// TLS, the hub replicas on it sharing one CA (sealed in etcd), member
// clusters with their agents, the baseline applied and rolled out, and a
// watcher on every member.
type fixture struct {
	t         *testing.T
	dir       string
	sp        *proc.Spawner
	ns        *ha.Netns // replica 0's, with options.netns
	etcd      *ha.Etcd
	ec        *clientv3.Client
	caKeyFile string
	hubs      []*ha.Replica
	clients   []*fleet.Client // by replica
	kit       *kit.Env
	agents    []*agentProc
	watch     *faults.Watcher
	hubBin    string
	agentBin  string
	singleHub bool
	noRelay   bool
	hubArgs   []string
}

func newFixture(t *testing.T, o options) *fixture {
	t.Helper()
	if o.netns {
		if err := faults.Supported(); err != nil { // never a skip: make ha installs ip and iptables
			t.Fatalf("partition scenario cannot run here: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	x := &fixture{t: t, dir: t.TempDir(), hubBin: o.hubBin, agentBin: o.agentBin, singleHub: o.singleHub, noRelay: o.noRelay, hubArgs: o.hubArgs}
	if x.hubBin == "" {
		x.hubBin = filepath.Join(binDir, "tether-hub")
	}
	if x.agentBin == "" {
		x.agentBin = filepath.Join(binDir, "tether-agent")
	}
	x.sp = proc.NewSpawner()
	t.Cleanup(x.sp.Close)
	var extraIPs []net.IP
	if o.netns {
		ns, err := ha.NewNetns()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := ns.Close(); err != nil {
				t.Errorf("remove the namespace: %v", err)
			}
		})
		x.ns, extraIPs = ns, []net.IP{ns.HostIP}
	}
	x.startEtcd(ctx, extraIPs)
	n := o.replicas
	if n == 0 {
		n = replicaCount
	}
	x.startHubs(ctx, n)
	if o.noMembers {
		return x
	}
	x.kit = kit.StartT(t, kit.Options{Clusters: kit.Members(memberCount), Dir: filepath.Join(x.dir, "clusters")})
	x.startAgents(ctx)
	x.waitRegistered(ctx)
	x.apply(ctx, baselineYAML(x.clusterNames()))
	x.waitBaseline(ctx)
	x.startWatch(o.load)
	return x
}

// startEtcd starts the etcd cluster and a client of it for the checks.
func (x *fixture) startEtcd(ctx context.Context, extraIPs []net.IP) {
	t := x.t
	bin, err := kit.BinDir("")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(x.dir, "etcd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	e, err := ha.StartEtcd(ctx, x.sp, filepath.Join(bin, "etcd"), dir, extraIPs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	x.etcd = e
	if x.ec, err = e.Client(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.ec.Close() })
}

// startHubs starts replica 0 and waits until it leads, then the others, so
// that the first leader is known (replica 0) and, with options.netns, is
// the one in the namespace.
func (x *fixture) startHubs(ctx context.Context, n int) {
	t := x.t
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	x.caKeyFile = filepath.Join(x.dir, "ca-encryption.key")
	if err := os.WriteFile(x.caKeyFile, []byte(base64.StdEncoding.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	ports, err := ha.FreePorts(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		host, etcdHost, listenPort, metricsPort := "127.0.0.1", "127.0.0.1", ports[2*i], ports[2*i+1]
		var wrap []string
		if i == 0 && x.ns != nil {
			host, etcdHost, wrap = x.ns.NSIP.String(), x.ns.HostIP.String(), x.ns.Exec()
		}
		args := append(x.etcd.HubArgs(etcdHost), "--ca-encryption-key-file", x.caKeyFile)
		args = append(args, x.hubArgs...)
		r := ha.NewReplica(x.sp, i, filepath.Join(x.dir, "hub-"+strconv.Itoa(i)),
			net.JoinHostPort(host, strconv.Itoa(listenPort)), net.JoinHostPort(host, strconv.Itoa(metricsPort)), wrap, args)
		x.hubs = append(x.hubs, r)
	}
	t.Cleanup(func() {
		if t.Failed() {
			x.logTails()
		}
		for _, r := range x.hubs {
			r.Stop()
		}
	})
	for i, r := range x.hubs {
		if err := r.Start(x.hubBin); err != nil {
			t.Fatal(err)
		}
		if err := r.WaitServing(ctx); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := x.waitLeading(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range x.hubs {
		c, err := r.Client()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		x.clients = append(x.clients, c)
	}
}

// waitLeading waits until r reports itself leader.
func (x *fixture) waitLeading(ctx context.Context, r *ha.Replica) error {
	return proc.Poll(ctx, pollFine, func(ctx context.Context) error {
		if err := r.Exited(); err != nil {
			return proc.Permanent(err)
		}
		ok, err := r.Leading(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("hub %d not leading", r.Index)
		}
		return nil
	})
}

// clusterNames are the member clusters' names.
func (x *fixture) clusterNames() []string {
	var names []string
	for _, s := range kit.Members(memberCount) {
		names = append(names, s.Name)
	}
	return names
}

// apply applies manifests through replica 0.
func (x *fixture) apply(ctx context.Context, manifests string) {
	if _, err := x.clients[0].Apply(ctx, []byte(manifests)); err != nil {
		x.t.Fatal(err)
	}
}

// startWatch watches the baseline's and the load's objects in every
// member until the test ends.
func (x *fixture) startWatch(load int) {
	ctx, cancel := context.WithCancel(context.Background())
	var ms []faults.Member
	for _, c := range x.kit.Clusters {
		ms = append(ms, faults.Member{Name: c.Name, Client: c.Dynamic()})
	}
	tracked := []faults.Tracked{{Resource: deployments, Namespace: "default", Name: webName}}
	for i := range load {
		tracked = append(tracked, faults.Tracked{Resource: configMaps, Namespace: "default", Name: loadName(i)})
	}
	x.watch = faults.Watch(ctx, ms, tracked)
	x.t.Cleanup(func() {
		cancel()
		x.watch.Wait()
	})
}

// waitRegistered waits until every cluster is registered, Ready and has
// reported its APIs, so that the baseline is placed on all of them.
func (x *fixture) waitRegistered(ctx context.Context) {
	err := proc.Poll(ctx, pollFine*4, func(ctx context.Context) error {
		if err := x.exited(); err != nil {
			return proc.Permanent(err)
		}
		ready, err := x.clients[0].ReadyClusters(ctx)
		if err != nil {
			return err
		}
		if len(ready) != memberCount {
			return fmt.Errorf("clusters Ready: %v", ready)
		}
		return nil
	})
	if err != nil {
		x.t.Fatalf("clusters not registered: %v", err)
	}
}

// waitBaseline waits until the baseline Deployment runs where its
// placement says, on every member, and the leader's aggregated status
// says it is rolled out (the agents' reports reach it from whichever
// replica they stream to).
func (x *fixture) waitBaseline(ctx context.Context) {
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		if err := x.exited(); err != nil {
			return proc.Permanent(err)
		}
		p, err := x.placement(ctx)
		if err != nil {
			return err
		}
		if len(p) != memberCount {
			return fmt.Errorf("%s placed on %v", webName, p)
		}
		return x.webInMembers(ctx, p)
	})
	if err != nil {
		x.t.Fatalf("baseline not rolled out: %v", err)
	}
	if x.noRelay {
		return
	}
	if err := x.waitRolled(ctx); err != nil {
		x.t.Fatal(err)
	}
}

// rolledTimeout bounds the wait for the baseline's aggregated status:
// kwok's pods are ready within seconds; the agents report them, the
// replicas relay the reports to the leader.
const rolledTimeout = 2 * time.Minute

// waitRolled waits until a live replica reports the baseline Deployment
// rolled out in its aggregated status.
func (x *fixture) waitRolled(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, rolledTimeout)
	defer cancel()
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		live := x.live()
		if len(live) == 0 {
			return fmt.Errorf("no live replica")
		}
		obj, err := live[0].Get(ctx, webRef)
		if err != nil {
			return err
		}
		return fleet.Rolled(obj)
	})
	if err != nil {
		return fmt.Errorf("%s's aggregated status not rolled out: %w", webName, err)
	}
	return nil
}

// placement is where the baseline Deployment runs: replicas by cluster.
func (x *fixture) placement(ctx context.Context) (map[string]int32, error) {
	var lastErr error
	for _, c := range x.live() {
		p, err := c.GetPlacement(ctx, webRef)
		if err != nil {
			lastErr = err
			continue
		}
		out := map[string]int32{}
		for _, pc := range p.GetClusters() {
			out[pc.GetCluster()] = pc.GetReplicas()
		}
		return out, nil
	}
	return nil, lastErr
}

// live are the clients of the replicas that run.
func (x *fixture) live() []*fleet.Client {
	var out []*fleet.Client
	for i, r := range x.hubs {
		if r.Exited() == nil {
			out = append(out, x.clients[i])
		}
	}
	return out
}

// exited returns why a replica, an agent or an etcd member ended.
func (x *fixture) exited() error {
	if err := x.etcd.Exited(); err != nil {
		return err
	}
	for _, a := range x.agents {
		if a.p.Exited() {
			return a.p.ExitError()
		}
	}
	return nil
}

// logTails prints the end of every replica's and agent's log.
func (x *fixture) logTails() {
	for _, r := range x.hubs {
		x.t.Logf("--- last lines of %s ---\n%s", r.LogPath, proc.FileTail(r.LogPath, 30))
	}
	for _, a := range x.agents {
		x.t.Logf("--- last lines of %s ---\n%s", a.log, proc.FileTail(a.log, 30))
	}
}

// leaderIndex returns the replica whose name etcd holds as leader (the
// lowest create revision under /tether/leader/) with that key's create
// revision, or -1 when none does.
func (x *fixture) leaderIndex(ctx context.Context) (int, int64, error) {
	resp, err := x.ec.Get(ctx, leaderPrefix, clientv3.WithPrefix(),
		clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(1))
	if err != nil {
		return -1, 0, fmt.Errorf("read the leader key: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return -1, 0, nil
	}
	kv := resp.Kvs[0]
	i := slices.IndexFunc(x.hubs, func(r *ha.Replica) bool {
		return len(kv.Value) >= len(r.LeaderName()) && string(kv.Value[len(kv.Value)-len(r.LeaderName()):]) == r.LeaderName()
	})
	if i < 0 {
		return -1, 0, fmt.Errorf("leader %q is no replica of this fixture", kv.Value)
	}
	return i, kv.CreateRevision, nil
}

// leaderPrefix is where the replicas campaign (hub/leader.DefaultPrefix
// and the election's separator).
const leaderPrefix = "/tether/leader/"

// pollFine is the resolution of the measured figures (leader change,
// step-down).
const pollFine = 50 * time.Millisecond

var webRef = &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: webName}

// webInMembers says whether the baseline Deployment is in every member of
// placement p with its replicas.
func (x *fixture) webInMembers(ctx context.Context, p map[string]int32) error {
	for name, want := range p {
		c := x.kit.Cluster(name)
		if c == nil {
			return fmt.Errorf("placement names %s, no member of this fixture", name)
		}
		d, err := c.Dynamic().Resource(deployments).Namespace("default").Get(ctx, webName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		got, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		if got != int64(want) {
			return fmt.Errorf("%s: %s has %d replicas; placement says %d", name, webName, got, want)
		}
	}
	return nil
}
