package load_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/test/load"
)

// Sizes of the smoke run.
const (
	smokeAgents  = 50
	smokeWorkers = 2
	smokeWorks   = 5
)

// TestSmoke runs a few agents through every scenario but the flap and
// checks what does not depend on the machine's speed: every scenario
// completes, a hub restart and a reconnect storm resend no work the agents
// hold unchanged, reinstalled agents get every work again (so the resend
// count counts), and the results and plots are written.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a hub and worker processes")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// What an earlier run left: its hub's store must not carry over.
	earlier := filepath.Join(dir, "hub", "left-by-an-earlier-run")
	if err := os.MkdirAll(filepath.Dir(earlier), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(earlier, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := load.Run(ctx, load.Config{
		Dir: dir, HubBin: filepath.Join(binDir, "tether-hub"), LoadBin: filepath.Join(binDir, "tether-load"),
		Agents: smokeAgents, Workers: smokeWorkers, Enroll: load.EnrollToken, Ramp: time.Second,
		Scenarios: []string{load.ScenarioIdle, load.ScenarioFanout, load.ScenarioWorks, load.ScenarioRestart,
			load.ScenarioStorm, load.ScenarioFresh},
		WorksPerAgent: smokeWorks, Idle: time.Second, Timeout: 2 * time.Minute, StormJitter: time.Second,
		CountKeys: true,
	}, hclog.New(&hclog.LoggerOptions{Name: "load", Output: &out, Level: hclog.Info}))
	if res != nil {
		res.Print(&out)
	}
	t.Log(out.String())
	if err != nil {
		t.Fatalf("load.Run: %v (hub log: %s)", err, tail(filepath.Join(dir, "hub.log")))
	}
	if _, err := os.Stat(earlier); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the earlier run's hub directory was kept (%s: %v); want every run to start a fresh hub", earlier, err)
	}
	if len(res.Errors) > 0 {
		t.Errorf("agent errors: %s", strings.Join(res.Errors, "; "))
	}
	if r := res.Restart; r.UpsertsResent != 0 || r.BytesResent != 0 {
		t.Errorf("after the hub's kill -9 and restart the hub sent %d upserts (%d bytes); want none: every agent holds every work unchanged",
			r.UpsertsResent, r.BytesResent)
	}
	if r := res.Storm; r.UpsertsResent != 0 {
		t.Errorf("after a reconnect storm the hub sent %d upserts; want none", r.UpsertsResent)
	}
	// fanout's template and the works, to every agent.
	if r, want := res.Fresh, int64(smokeAgents*(1+smokeWorks)); r.UpsertsResent != want || r.BytesResent == 0 {
		t.Errorf("reinstalled agents were sent %d upserts (%d bytes); want %d", r.UpsertsResent, r.BytesResent, want)
	}
	// Templates, bindings, clusters and their agent records, plus a few
	// of the hub's own: nothing per (template × cluster), not even the
	// agents' reports (a single hub holds them in memory).
	if limit := int64(3*(1+smokeWorks) + 3*smokeAgents + 50); res.EtcdKeys <= 0 || res.EtcdKeys > limit {
		t.Errorf("etcd holds %d keys (%v); want some and at most %d, templates plus clusters", res.EtcdKeys, res.EtcdKeysByPrefix, limit)
	}
	for _, f := range []string{"results.json", load.CDFPlot, load.MemoryPlot} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Error(err)
		} else if f != "results.json" && !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG", f)
		}
	}
}

func tail(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(data), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
