package memberproxy_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/internal/memberreq"
	"github.com/tetherproj/tether/test/fleet"
)

// TestBoundsAndNoLeak: a user's sessions past --proxy-sessions-per-user
// are refused with 429; a session quiet for --proxy-idle-timeout ends;
// after 1,000 sessions (lists, and watches the client cuts) the hub's and
// the agent's goroutines are back to where they were.
func TestBoundsAndNoLeak(t *testing.T) {
	hubPprof, agentPprof := freeAddr(t), freeAddr(t)
	e := startOpts(t, []string{"edge-1"}, false, func(o *fleet.Options) {
		o.HubArgs = append(o.HubArgs, "--proxy-sessions-per-user=3", "--proxy-idle-timeout=3s", "--pprof-addr="+hubPprof)
		o.AgentArgs = []string{"--pprof-addr=" + agentPprof}
	})
	admin := e.kubeconfig(t, "admin", e.admin, "edge-1")
	e.waitProxy(t, admin)
	e.must(t, e.member("edge-1"), "create", "clusterrolebinding", "tether-admins", "--clusterrole=cluster-admin", "--group=tether:role:admin")
	hc := httpClient(t, e.admin)
	base := "https://" + e.proxyAddr + memberreq.ProxyPath("edge-1")

	t.Run("sessions per user", func(t *testing.T) {
		var cancels []context.CancelFunc
		for range 3 {
			_, cancel := openWatch(t, hc, base+"/api/v1/namespaces/default/configmaps?watch=true")
			cancels = append(cancels, cancel)
		}
		resp, body := get(t, hc, base+"/api/v1/namespaces/default/pods")
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "has 3 proxy sessions open") {
			t.Errorf("4th session of a user with 3 open = %d %s; want 429 naming the bound", resp.StatusCode, body)
		}
		for _, c := range cancels {
			c()
		}
		// The hub ends a session when it sees the client gone, a moment
		// after the cancel: the next subtest starts once it has.
		sessionsFree(t, hc, base+"/api/v1/namespaces/default/pods")
	})
	t.Run("idle timeout", func(t *testing.T) {
		body, cancel := openWatch(t, hc, base+"/api/v1/namespaces/kube-public/configmaps?watch=true&resourceVersion=999999999&timeoutSeconds=600")
		defer cancel()
		start := time.Now()
		_, _ = io.Copy(io.Discard, body) // ends when the hub cuts the quiet session
		if took := time.Since(start); took < 2*time.Second || took > 20*time.Second {
			t.Errorf("a quiet watch ended after %s; want about --proxy-idle-timeout, 3s", took)
		}
	})
	t.Run("1000 sessions leave no goroutine", func(t *testing.T) {
		for range 20 { // warm up: connections, caches
			get(t, hc, base+"/api/v1/namespaces/default/pods")
		}
		hubBefore, agentBefore := goroutines(t, hubPprof), goroutines(t, agentPprof)
		sessions(t, hc, base, 1000)
		if t.Failed() {
			t.Fatalf("agent's proxy goroutines:\n%s", proxyStacks(t, agentPprof))
		}
		settled(t, "hub", hubPprof, hubBefore)
		settled(t, "agent", agentPprof, agentBefore)
	})
}

// sessionsFree waits until a session of the user is admitted again (not
// 429), as it is once the hub has ended the ones the client cut.
func sessionsFree(t *testing.T, hc *http.Client, url string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, body := get(t, hc, url)
		if resp.StatusCode != http.StatusTooManyRequests {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("15 s after the client cut its sessions, still %d %s", resp.StatusCode, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sessions runs n proxied sessions, two at a time (the user may have
// three): lists, and every tenth a watch the client cuts once it started.
func sessions(t *testing.T, hc *http.Client, base string, n int) {
	var wg sync.WaitGroup
	work := make(chan int)
	for range 2 {
		wg.Go(func() {
			for i := range work {
				if err := retryBusy(func() error { return session(hc, base, i%10 == 0) }); err != nil {
					t.Errorf("session %d: %v", i, err)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// errBusy is a session refused with 429: the user's bound counts the
// watches the client just cut until the hub has seen them go.
var errBusy = errors.New("429: the user's sessions are all open")

// retryBusy runs f again while it is refused with errBusy, for up to 5 s:
// the bound itself is tested in "sessions per user", this counts leaks.
func retryBusy(f func() error) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := f()
		if !errors.Is(err, errBusy) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// session runs one list, or a watch the client cuts once it started.
func session(hc *http.Client, base string, watch bool) error {
	url := base + "/api/v1/namespaces/default/pods"
	if watch {
		url += "?watch=true"
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		return errBusy
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	if !watch {
		_, err = io.Copy(io.Discard, resp.Body)
	}
	return err
}

// settled waits until the process's goroutines are back within 10 of
// before (taken before the sessions).
func settled(t testing.TB, name, pprof string, before int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		now := goroutines(t, pprof)
		if now <= before+10 {
			t.Logf("%s goroutines: %d before the sessions, %d after", name, before, now)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s goroutines: %d before the sessions, still %d 30 s after; the proxy's:\n%s", name, before, now, proxyStacks(t, pprof))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// proxyStacks returns the stacks of a process's goroutines that run
// member proxy code, grouped with their counts.
func proxyStacks(t testing.TB, addr string) string {
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, g := range strings.Split(string(b), "\n\n") {
		if strings.Contains(g, "memberproxy") || strings.Contains(g, "tunnelconn") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// goroutines reads a process's goroutine count from its pprof endpoint.
func goroutines(t testing.TB, addr string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "goroutine profile: total")))
	if err != nil {
		t.Fatalf("goroutine profile's first line %q: %v", line, err)
	}
	return n
}

// httpClient is an HTTPS client with cfg's CA and certificate.
func httpClient(t testing.TB, cfg client.Config) *http.Client {
	t.Helper()
	cert, err := tls.X509KeyPair(cfg.CertPEM, cfg.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// get GETs url and returns the response and its body.
func get(t testing.TB, hc *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// openWatch starts a streaming GET and returns its body once the response
// headers arrived (200), and the cancel that ends it.
func openWatch(t testing.TB, hc *http.Client, url string) (io.Reader, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	c := *hc
	c.Timeout = 0 // a watch lasts
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("watch %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		cancel()
		t.Fatalf("watch %s: %d %s", url, resp.StatusCode, b)
	}
	return resp.Body, func() { cancel(); resp.Body.Close() }
}
