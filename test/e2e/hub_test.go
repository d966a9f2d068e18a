package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hubStartTimeout bounds a hub's start-up: the embedded etcd, the CA on a
// first start, the first listing of every controller.
const hubStartTimeout = 60 * time.Second

// hubProc is one run of tether-hub.
type hubProc struct {
	*proc
	dir     string // --data-dir
	addr    string // the gRPC address, from hub.addr
	metrics string // the metrics address, from the log
}

// startHub starts tether-hub on dataDir listening on listen (127.0.0.1:0
// for a free port; the address of an earlier run to come back where the
// agents look), with metrics on a free port and debug logs, and waits until
// it serves. The hub stops when owner ends (see startProc).
func startHub(t, owner testing.TB, dataDir, listen string, extra ...string) *hubProc {
	t.Helper()
	// A hub killed with SIGKILL leaves its hub.addr; this run must not take
	// it for its own.
	if err := os.Remove(filepath.Join(dataDir, "hub.addr")); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	p := startProc(t, owner, "tether-hub", hubBin, append([]string{"--data-dir", dataDir, "--listen", listen,
		"--metrics-listen", "127.0.0.1:0", "-log-level", "debug"}, extra...)...)
	h := &hubProc{proc: p, dir: dataDir}
	poll(t, hubStartTimeout, "tether-hub writes hub.addr", func() (bool, string) {
		if p.exited() {
			t.Fatalf("tether-hub exited during start-up: %v", p.ExitError())
		}
		data, err := os.ReadFile(filepath.Join(dataDir, "hub.addr"))
		if err != nil {
			return false, err.Error()
		}
		h.addr = strings.TrimSpace(string(data))
		return true, ""
	})
	m := regexp.MustCompile(`serving metrics: address=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatalf("tether-hub's log names no metrics address:\n%s", p.tail(40))
	}
	h.metrics = m[1]
	return h
}

// identity is the hub identity the hub logged when it started serving. The
// hub writes hub.addr, which startHub waits for, just before that line, so
// a loaded machine may read the log between the two: it is polled for.
func (h *hubProc) identity(t testing.TB) string {
	t.Helper()
	re := regexp.MustCompile(`hub serving: .*hub_identity=(\S+)`)
	var m []string
	poll(t, hubStartTimeout, "tether-hub's log names its hub identity", func() (bool, string) {
		m = re.FindStringSubmatch(h.logText())
		return m != nil, h.tail(40)
	})
	return m[1]
}

// metric reads one sample of the hub's /metrics: name is the sample's
// name with its labels as Prometheus prints them, e.g.
// `tether_hub_clusters{state="Ready"}`.
func (h *hubProc) metric(name string) (float64, error) {
	resp, err := http.Get("http://" + h.metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return sample(resp.Body, name)
}

// sample finds name's value in a Prometheus text exposition.
func sample(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 || line[:i] != name {
			continue
		}
		return strconv.ParseFloat(line[i+1:], 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no sample %s", name)
}

// waitMetric polls a metric until it equals want.
func (h *hubProc) waitMetric(t testing.TB, timeout time.Duration, name string, want float64) {
	t.Helper()
	poll(t, timeout, fmt.Sprintf("%s = %v", name, want), func() (bool, string) {
		v, err := h.metric(name)
		if err != nil {
			return false, err.Error()
		}
		return v == want, fmt.Sprint(v)
	})
}

// poll calls cond every pollInterval until it returns true, failing the
// test with what and cond's last state once timeout has passed.
func poll(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last: %s)", what, timeout, state)
		}
		time.Sleep(pollInterval)
	}
}

// pollInterval is the step of poll: short against the API servers' and the
// hub's own latencies (milliseconds), long enough not to load two cores.
const pollInterval = 50 * time.Millisecond
