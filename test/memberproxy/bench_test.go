package memberproxy_test

import (
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/internal/memberreq"
	"github.com/tetherproj/tether/test/fleet"
)

// BenchmarkMemberProxy measures the member proxy against a kit member:
// a GET's latency through the hub and directly (p50 and p99 per op),
// port-forward throughput through the hub, and the hub's memory per open
// session (watches held open).
//
//	go test -run '^$' -bench MemberProxy -benchtime 2000x ./test/memberproxy/
func BenchmarkMemberProxy(b *testing.B) {
	hubPprof := freeAddr(b)
	e := startOpts(b, []string{"edge-1"}, true, func(o *fleet.Options) { o.HubArgs = append(o.HubArgs, "--pprof-addr="+hubPprof) })
	admin := e.kubeconfig(b, "admin", e.admin, "edge-1")
	e.waitProxy(b, admin)
	e.must(b, e.member("edge-1"), "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin")
	e.runPod(b, admin, "web")
	hub := httpClient(b, e.admin)
	proxied := "https://" + e.proxyAddr + memberreq.ProxyPath("edge-1") + "/api/v1/namespaces/default/pods"
	direct := memberClient(b, e)

	b.Run("get/direct", func(b *testing.B) {
		benchGet(b, direct, e.f.Kit.Cluster("edge-1").Server+"/api/v1/namespaces/default/pods")
	})
	b.Run("get/proxied", func(b *testing.B) { benchGet(b, hub, proxied) })
	b.Run("port-forward", func(b *testing.B) { benchPortForward(b, e, admin) })
	b.Run("hub-memory-per-session", func(b *testing.B) { benchSessionMemory(b, e, hub, hubPprof) })
}

// benchGet GETs url b.N times and reports the latency percentiles.
func benchGet(b *testing.B, hc *http.Client, url string) {
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		resp, err := hc.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d", url, resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// memberClient is an HTTPS client with the member's admin token.
func memberClient(b *testing.B, e *env) *http.Client {
	c := e.f.Kit.Cluster("edge-1")
	hc := httpClient(b, e.admin) // for its transport settings; the member's CA and token replace the hub's
	tr := hc.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.RootCAs = poolOf(c.CAData)
	tr.TLSClientConfig.Certificates = nil
	return &http.Client{Transport: bearer{tr, c.Token}, Timeout: time.Minute}
}

type bearer struct {
	rt    http.RoundTripper
	token string
}

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.rt.RoundTrip(r)
}

// benchPortForward sends b.N × 1 MiB through kubectl port-forward (the
// hub, the agent, the member, kwok's echo) and reads it back.
func benchPortForward(b *testing.B, e *env, kubeconfig string) {
	local := freeAddr(b)
	_, port, _ := net.SplitHostPort(local)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, e.kubectl, "--kubeconfig", kubeconfig, "port-forward", "pod/web", port+":8080")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	conn := dialRetry(b, local)
	defer conn.Close()
	chunk := make([]byte, 1<<20)
	back := make([]byte, len(chunk))
	b.SetBytes(int64(len(chunk)))
	b.ResetTimer()
	for range b.N {
		errc := make(chan error, 1)
		go func() { _, err := conn.Write(chunk); errc <- err }()
		if _, err := io.ReadFull(conn, back); err != nil {
			b.Fatal(err)
		}
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
	}
}

func dialRetry(b *testing.B, addr string) net.Conn {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			b.Fatalf("dial %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// benchSessionMemory opens watches through the hub (at most the per-user
// bound) and reports the hub's Go heap in use per open session (resident
// memory moves in steps far larger than a session's share: not a figure).
func benchSessionMemory(b *testing.B, e *env, hc *http.Client, pprof string) {
	n := min(b.N, 30) // under the default 32 sessions per user
	url := "https://" + e.proxyAddr + memberreq.ProxyPath("edge-1") + "/api/v1/namespaces/default/configmaps?watch=true"
	heapBefore := heapInuse(b, pprof)
	var cancels []context.CancelFunc
	for range n {
		_, cancel := openWatch(b, hc, url)
		cancels = append(cancels, cancel)
	}
	time.Sleep(time.Second)
	heapAfter := heapInuse(b, pprof)
	for _, c := range cancels {
		c()
	}
	b.ReportMetric(float64(heapAfter-heapBefore)/float64(n)/1024, "heap-KiB/session")
}

// heapInuse reads a process's HeapInuse (bytes) from its pprof endpoint,
// after a GC (the gc parameter), so that garbage does not count.
func heapInuse(b *testing.B, addr string) int64 {
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1&gc=1")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(l, "# HeapInuse = "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	b.Fatal("no HeapInuse in the heap profile")
	return 0
}

// poolOf is a certificate pool of PEM.
func poolOf(pem []byte) *x509.CertPool {
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(pem)
	return p
}
