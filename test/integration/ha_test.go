package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/proc"
)

// haTimeout bounds each step of TestReplicas; a leader change must take
// at most the leader TTL (10 s) plus an etcd round trip.
const haTimeout = 30 * time.Second

// startEtcdCluster starts an n-member etcd cluster from the kit's etcd
// binary and returns its client URLs and processes. The members are killed
// with the test.
func startEtcdCluster(t *testing.T, n int) ([]string, []*proc.Process) {
	t.Helper()
	dir, err := kit.BinDir("") // never a skip: a missing etcd fails, saying how to build it
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "etcd")
	ports := freeTCPPorts(t, 2*n)
	var clients, peers []string
	var members []*proc.Process
	for i := range n {
		clients = append(clients, fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]))
		peers = append(peers, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[2*i+1]))
	}
	for i := range n {
		peer := strings.SplitN(peers[i], "=", 2)[1]
		dir := t.TempDir()
		p, err := proc.Start(procs, proc.Config{Name: fmt.Sprintf("etcd m%d", i), Bin: bin, Args: []string{
			"--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", clients[i], "--advertise-client-urls", clients[i],
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", strings.Join(peers, ","), "--initial-cluster-state", "new",
			"--unsafe-no-fsync", "--log-level", "warn"}, LogPath: filepath.Join(dir, "etcd.log")})
		if err != nil {
			t.Fatalf("start etcd: %v", err)
		}
		members = append(members, p)
		t.Cleanup(func() { p.Stop(0) })
	}
	return clients, members
}

func freeTCPPorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// copyCA gives dir the CA of from, as every replica of one hub must share
// it (until the CA is shared through etcd).
func copyCA(t *testing.T, from, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "pki"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.crt", "ca.key"} {
		data, err := os.ReadFile(filepath.Join(from, "pki", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pki", f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// leaders returns the hubs (of those not dead) whose log says they were
// elected since they started.
func leaders(hubs []*hubProc, dead map[*hubProc]bool) []*hubProc {
	var out []*hubProc
	for _, h := range hubs {
		if !dead[h] && h.logContains("elected leader") {
			out = append(out, h)
		}
	}
	return out
}

// clusterState asks the hub at addr for cluster's state.
func clusterState(ctx context.Context, a *admin, cluster string) (hubv1.ClusterState, error) {
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	resp, err := hubv1.NewClusterServiceClient(a.conn).GetCluster(ctx, &hubv1.GetClusterRequest{Name: cluster})
	if err != nil {
		return 0, err
	}
	return resp.GetCluster().GetState(), nil
}

// TestReplicas runs three hubs on a three-member etcd cluster: exactly one
// leads; an agent streaming to a follower is Ready in every replica's view
// and gets works the leader placed and its own replica rendered, at the
// versions any replica serves; kill -9 of the leader hands leadership to
// another replica within the leader TTL, and the agent keeps its cluster
// Ready and gets the next change.
func TestReplicas(t *testing.T) {
	clients, _ := startEtcdCluster(t, 3)
	endpoints := strings.Join(clients, ",")
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	hubs := []*hubProc{startHub(t, dirs[0], "--etcd-endpoints", endpoints, "--metrics-listen", "127.0.0.1:0")}
	for _, d := range dirs[1:] {
		copyCA(t, dirs[0], d)
		hubs = append(hubs, startHub(t, d, "--etcd-endpoints", endpoints, "--metrics-listen", "127.0.0.1:0"))
	}
	dead := map[*hubProc]bool{}
	var lead *hubProc
	poll(t, haTimeout, "one leader", func() (bool, string) {
		l := leaders(hubs, dead)
		if len(l) > 1 {
			t.Fatalf("%d replicas elected at once", len(l))
		}
		if len(l) == 1 {
			lead = l[0]
		}
		return len(l) == 1, fmt.Sprintf("%d leaders", len(l))
	})
	for _, h := range hubs {
		want := "tether_hub_leader 0"
		if h == lead {
			want = "tether_hub_leader 1"
		}
		poll(t, haTimeout, h.addr+" "+want, func() (bool, string) {
			body, err := scrape(h)
			return err == nil && strings.Contains(body, want+"\n"), fmt.Sprint(err)
		})
	}
	var follower *hubProc
	for _, h := range hubs {
		if h != lead {
			follower = h
			break
		}
	}
	ctx := ctxFor(t)
	ag := mintAgent(t, dirs[0], "cluster-a")
	s := connectReady(ctx, t, ag, follower.addr, nil)
	defer s.close()
	stopBeats := heartbeatEvery(s, time.Second)
	defer stopBeats()

	admins := map[*hubProc]*admin{}
	for i, h := range hubs {
		admins[h] = dialAdmin(t, dirs[0], h.addr)
		_ = i
	}
	for _, h := range hubs {
		waitClusterState(ctx, t, admins[h], "cluster-a", hubv1.ClusterState_CLUSTER_STATE_READY)
	}

	a := admins[lead]
	a.mustApply(ctx, deploymentYAML("web", "nginx:1.27", 2)+onlyAPolicy)
	v1 := receiveWorks(t, s, keyWeb)[keyWeb]
	admins[follower].mustApply(ctx, deploymentYAML("web", "nginx:1.28", 2)) // a client write through a follower
	u := waitUpsert(t, s, keyWeb)
	if u.GetVersion() == v1 {
		t.Fatalf("after the change, web came at the version it had: %s", v1)
	}
	if err := s.ack(keyWeb, u.GetVersion()); err != nil {
		t.Fatal(err)
	}
	// The same work from another replica: a stream holding that version
	// gets nothing new.
	other := hubs[0]
	for _, h := range hubs {
		if h != follower {
			other = h
		}
	}
	stopBeats()
	s.close()
	s2 := connectReady(ctx, t, ag, other.addr, map[string]string{keyWeb: u.GetVersion()})
	if len(s2.sync) != 0 {
		t.Errorf("replica %s sent %v to a stream holding web at %s from replica %s; want nothing", other.addr, s2.sync, u.GetVersion(), follower.addr)
	}
	s2.close()
	s = connectReady(ctx, t, ag, follower.addr, map[string]string{keyWeb: u.GetVersion()})
	defer s.close()
	stopBeats = heartbeatEvery(s, time.Second)
	defer stopBeats()

	// kill -9 the leader: another replica leads within the TTL.
	began := time.Now()
	lead.kill9()
	dead[lead] = true
	var next *hubProc
	poll(t, haTimeout, "a new leader", func() (bool, string) {
		l := leaders(hubs, dead)
		for _, h := range l {
			if h != lead {
				next = h
			}
		}
		return next != nil, fmt.Sprintf("%d leaders", len(l))
	})
	t.Logf("leader change after kill -9: %s (new leader %s)", time.Since(began).Round(time.Millisecond), next.addr)

	waitClusterState(ctx, t, admins[next], "cluster-a", hubv1.ClusterState_CLUSTER_STATE_READY)
	admins[next].mustApply(ctx, deploymentYAML("web", "nginx:1.29", 3))
	if u2 := waitUpsert(t, s, keyWeb); u2.GetVersion() == u.GetVersion() {
		t.Errorf("after the takeover, web came at the version it had: %s", u.GetVersion())
	}
	p, err := admins[next].placement(ctx, deployment("web"))
	if err != nil || strings.Join(placedOn(p), ",") != "cluster-a" {
		t.Errorf("placement of web after the takeover = %v, %v; want cluster-a", placedOn(p), err)
	}

	// A leader stopped on purpose (SIGTERM) resigns: the last replica leads
	// at once, without waiting for the TTL.
	s.close()
	began = time.Now()
	next.kill()
	dead[next] = true
	poll(t, haTimeout, "the last replica leading", func() (bool, string) {
		return len(leaders(hubs, dead)) == 1, ""
	})
	t.Logf("leader change after SIGTERM of the leader: %s (including its graceful stop)", time.Since(began).Round(time.Millisecond))
}

const onlyAPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: only-a, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [cluster-a]}
---
`

// heartbeatEvery heartbeats on s every interval until stop.
func heartbeatEvery(s *stream, interval time.Duration) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if s.heartbeat() != nil {
					return
				}
			}
		}
	}()
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			close(done)
			<-exited
		}
	}
}

func waitClusterState(ctx context.Context, t *testing.T, a *admin, cluster string, want hubv1.ClusterState) {
	t.Helper()
	poll(t, haTimeout, fmt.Sprintf("%s %s", cluster, want), func() (bool, string) {
		got, err := clusterState(ctx, a, cluster)
		return err == nil && got == want, fmt.Sprintf("%s, %v", got, err)
	})
}

// TestPartitionedLeaderStepsDown gives each of three hubs one etcd member
// and freezes the leader's member (SIGSTOP): the leader cannot keep its
// session alive, so it stops its controllers within the leader TTL, and
// a replica on the other two members (which keep a quorum) takes over.
func TestPartitionedLeaderStepsDown(t *testing.T) {
	clients, members := startEtcdCluster(t, 3)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	hubs := []*hubProc{startHub(t, dirs[0], "--etcd-endpoints", clients[0])}
	for i, d := range dirs[1:] {
		copyCA(t, dirs[0], d)
		hubs = append(hubs, startHub(t, d, "--etcd-endpoints", clients[i+1]))
	}
	var lead *hubProc
	poll(t, haTimeout, "one leader", func() (bool, string) {
		l := leaders(hubs, nil)
		if len(l) == 1 {
			lead = l[0]
		}
		return len(l) == 1, fmt.Sprintf("%d leaders", len(l))
	})
	idx := slices.Index(hubs, lead)
	began := time.Now()
	if err := syscall.Kill(members[idx].PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(members[idx].PID(), syscall.SIGCONT) })
	poll(t, haTimeout, "the cut-off leader stepping down", func() (bool, string) {
		return lead.logContains("lost leadership"), ""
	})
	t.Logf("cut-off leader stopped its controllers %s after its etcd member froze", time.Since(began).Round(time.Millisecond))
	var next *hubProc
	poll(t, haTimeout, "a new leader", func() (bool, string) {
		for _, h := range leaders(hubs, map[*hubProc]bool{lead: true}) {
			next = h
		}
		return next != nil, ""
	})
	t.Logf("new leader %s %s after the freeze", next.addr, time.Since(began).Round(time.Millisecond))
}

// scrape returns the hub's /metrics, its address read from the log.
func scrape(h *hubProc) (string, error) {
	data, err := os.ReadFile(h.log)
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`serving metrics: address=(\S+)`).FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("the log names no metrics address")
	}
	resp, err := http.Get("http://" + string(m[1]) + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}
