package hub_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/hub/storewatch/storewatchtest"
	"github.com/tetherproj/tether/test/tier"
)

// storeLossTimeout bounds the wait for the store watch's decision: its
// 10 s grace, the probes around it and the hub's start on a busy machine.
const storeLossTimeout = 2 * time.Minute

// msgStoreLost starts the store watch's log line when it decides the store
// is lost.
const msgStoreLost = "store lost"

// TestEmbeddedHubKeepsItsAgentsWhenItsStoreDoesNotAnswer: a hub on its
// embedded etcd whose store probe never answers (each read runs into its
// timeout, as when the process is too starved for CPU to get its own
// etcd's answer in time). Past the grace the watch decides the store is
// lost, and keeps everything: the agent's stream stays open without
// Goodbye, the hub stays SERVING and welcomes a new stream. There is no
// other replica its agents could go to; sending them away would only make
// them all reconnect to the same starved process.
func TestEmbeddedHubKeepsItsAgentsWhenItsStoreDoesNotAnswer(t *testing.T) {
	var probes atomic.Int64
	unanswered := func(ctx context.Context) error {
		probes.Add(1)
		<-ctx.Done()
		return ctx.Err()
	}
	logs := &syncBuffer{}
	r := runProbedReplica(t, hubConfigWithEmbeddedEtcd(t), unanswered, logs)
	r.serving(t)
	ctx, cancel := context.WithTimeout(context.Background(), storeLossTimeout)
	defer cancel()
	cert, ended := r.watchedAgent(t, ctx, "edge-1")

	if err := pollUntil(ctx, func() bool { return strings.Contains(logs.String(), msgStoreLost) }); err != nil {
		t.Fatalf("the store watch did not decide the store was lost: %v; log:\n%s", err, logs.String())
	}
	// The watch acts on its decision before it probes again.
	after := probes.Load() + 1
	if err := pollUntil(ctx, func() bool { return probes.Load() > after }); err != nil {
		t.Fatalf("the store watch stopped probing: %v", err)
	}
	select {
	case err := <-ended:
		t.Errorf("the agent's stream ended after the store was declared lost: %v; want it kept (no other replica to go to)", err)
	default:
	}
	health, err := healthpb.NewHealthClient(dial(t, r.addr, r.agentTLS(t, cert))).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("gRPC health after the store was declared lost = %s; want SERVING", health.GetStatus())
	}
	if _, err := r.connectAgent(t, ctx, cert); err != nil {
		t.Errorf("a new agent stream after the store was declared lost: %v; want it welcomed", err)
	}
}

// runProbedReplica starts a hub with cfg whose store watch calls probe
// and whose log goes to logs; it is stopped at the end of the test.
func runProbedReplica(t *testing.T, cfg hub.Config, probe func(context.Context) error, logs *syncBuffer) *replica {
	t.Helper()
	h, err := hub.New(cfg, hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info}))
	if err != nil {
		t.Fatalf("hub.New: %v", err)
	}
	if probe != nil {
		hub.SetStoreProbe(h, probe)
	}
	r, _ := startHub(t, h, cfg.DataDir)
	return r
}

// watchedAgent registers cluster through r, opens its agent stream and
// returns the agent's certificate and how the stream ends (watchEnd).
func (r *replica) watchedAgent(t *testing.T, ctx context.Context, cluster string) (tls.Certificate, <-chan error) {
	t.Helper()
	cert := r.registerAgent(t, ctx, cluster)
	return cert, r.openAgent(t, ctx, cert, &agentv1.Hello{AgentVersion: "test"}).watchEnd()
}

// agentTLS is cert's client configuration for r.
func (r *replica) agentTLS(t *testing.T, cert tls.Certificate) *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(r.adminConf(t).CertificateAuthority))
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// watchEnd reads s until it ends, and then says how: the Goodbye's reason
// or the receive error.
func (s *agentStream) watchEnd() <-chan error {
	ended := make(chan error, 1)
	go func() {
		for {
			m, err := s.stream.Recv()
			if err != nil {
				ended <- err
				return
			}
			if g := m.GetGoodbye(); g != nil {
				ended <- errors.New("Goodbye " + g.GetReason().String() + ": " + g.GetMessage())
				return
			}
		}
	}()
	return ended
}

// pollUntil polls cond every 50 ms until it holds or ctx ends.
func pollUntil(ctx context.Context, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// syncBuffer is a log sink safe for the hub's goroutines and the test.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// starvedFor is how long TestStarvedReplicaKeepsItsAgents starves the
// process: three graces, where a replica that counted a starved process's
// failed reads lost its store within the first.
const starvedFor = 3 * 10 * time.Second

// Starvation of TestStarvedReplicaKeepsItsAgents (storewatchtest.Starve): on one
// thread for Go code, starvers goroutines each work starveWork and sleep
// a millisecond, wanting the thread 10 times more than it has: a
// goroutine that becomes runnable waits about two seconds, as a hub's do
// with far more agents than its CPU can serve.
const (
	starvers   = 200
	starveWork = 10 * time.Millisecond
)

// msgProbeLate is the store watch's log line for a failed read it does
// not count because the process ran late.
const msgProbeLate = "store probe failed while this process ran late"

// TestStarvedReplicaKeepsItsAgents: a replica on an external etcd, whose
// process is starved of CPU for starvedFor (see starvers): its reads time
// out because it does not run to take etcd's answers, which come. It keeps
// its agent (no Goodbye) and never declares its store lost; it logs the
// probes that failed late. Before, after 10 s of failed reads it sent its
// agents away, to come back to the same starved process.
func TestStarvedReplicaKeepsItsAgents(t *testing.T) {
	if testing.Short() {
		t.Skipf("starves this process for %s", starvedFor)
	}
	tier.Long(t, fmt.Sprintf("starves this process for %s", starvedFor))
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	logs := &syncBuffer{}
	r := runProbedReplica(t, baseConfig(t, e), nil, logs)
	r.serving(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTimeout)
	defer cancel()
	_, ended := r.watchedAgent(t, ctx, "edge-1")

	storewatchtest.Starve(starvers, starveWork, starvedFor)
	select {
	case err := <-ended:
		t.Errorf("the agent's stream ended while the replica was starved of CPU: %v; want it kept (etcd answered; the replica did not run)", err)
	default:
	}
	log := logs.String()
	if strings.Contains(log, msgStoreLost) {
		t.Errorf("a replica starved of CPU declared its store lost; log:\n%s", log)
	}
	if !strings.Contains(log, msgProbeLate) {
		t.Errorf("no store probe failed while the replica was starved: the starvation proved nothing; log:\n%s", log)
	}
}

// cutBound is how long after its etcd is cut off a replica may take to
// send its agents away: under a cluster lease (the hub's default 40 s), so
// that they move before their clusters turn Unknown.
const cutBound = 40 * time.Second

// TestReplicaCutOffEtcdSendsItsAgentsAway: a replica on an external etcd
// reached through a proxy that starts dropping every byte both ways (as
// iptables DROP does; connections stay open). The replica, idle and
// running on time, sends its agent away with Goodbye SHUTDOWN naming its
// store, within cutBound: starvation's rule does not slow a partition's.
func TestReplicaCutOffEtcdSendsItsAgentsAway(t *testing.T) {
	e := etcdtest.Start(t, etcdtest.Options{TLS: true})
	p := newBlackHole(t, strings.TrimPrefix(e.Endpoints[0], "https://"))
	cfg := baseConfig(t, e)
	cfg.EtcdEndpoints = []string{"https://" + p.addr()}
	r := runReplica(t, cfg)
	t.Cleanup(p.heal) // before the replica stops (cleanups run last first)
	r.serving(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTimeout)
	defer cancel()
	_, ended := r.watchedAgent(t, ctx, "edge-1")

	cut := time.Now()
	p.cut()
	select {
	case err := <-ended:
		t.Logf("agent sent away %s after the cut: %v", time.Since(cut).Round(time.Millisecond), err)
		if !strings.Contains(err.Error(), "Goodbye DISCONNECT_REASON_SHUTDOWN") || !strings.Contains(err.Error(), "store") {
			t.Errorf("agent's stream ended with %v; want Goodbye SHUTDOWN naming the store", err)
		}
	case <-time.After(cutBound):
		t.Errorf("the agent of a replica cut off its etcd still streams to it %s after the cut; want it sent away", cutBound)
	}
}

// blackHole forwards TCP connections to target until cut, then drops
// every byte both ways and leaves the connections open.
type blackHole struct {
	ln     net.Listener
	target string
	down   atomic.Bool
	wg     sync.WaitGroup // the accept loop and every copy
	mu     sync.Mutex     // guards conns
	conns  []net.Conn
}

func newBlackHole(t *testing.T, target string) *blackHole {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackHole{ln: ln, target: target}
	b.wg.Add(1)
	go b.accept()
	t.Cleanup(b.close)
	return b
}

func (b *blackHole) addr() string { return b.ln.Addr().String() }
func (b *blackHole) cut()         { b.down.Store(true) }
func (b *blackHole) heal()        { b.down.Store(false) }

func (b *blackHole) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return // closed
		}
		up, err := net.Dial("tcp", b.target)
		if err != nil {
			c.Close()
			continue
		}
		b.mu.Lock()
		b.conns = append(b.conns, c, up)
		b.mu.Unlock()
		b.wg.Add(2)
		go b.pipe(up, c)
		go b.pipe(c, up)
	}
}

// pipe copies src to dst, dropping what it reads while cut.
func (b *blackHole) pipe(dst, src net.Conn) {
	defer b.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !b.down.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// close stops accepting, closes every connection and waits for the copies.
func (b *blackHole) close() {
	b.ln.Close()
	b.mu.Lock()
	for _, c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}
