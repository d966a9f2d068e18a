package bench_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/bench"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/kit"
)

// Flags of the full run (`make bench` passes them after -args).
var (
	full        = flag.Bool("full", false, "run the baseline workload in full (make bench) instead of the small run of make test")
	runs        = flag.Int("runs", bench.DefaultRuns, "runs of each variant and mode")
	deployments = flag.Int("deployments", bench.DefaultDeployments, "Deployments per variant")
	out         = flag.String("out", "", "directory for bench.md, results.json and the plots (empty: a temporary one)")
)

// binDir holds the tether-hub and tether-agent TestMain built.
var binDir string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(fleet.RunTests(m, &binDir, leakcheck.Filter{
		Only:   []string{"github.com/tetherproj/tether/test/"},
		Ignore: []string{"bench_test."},
	}))
}

// smokeDeployments keeps the default run short: 6 Deployments over 3
// clusters of one node each, once. smokePhaseTimeout bounds each of its
// phases, which take a few seconds on two idle cores.
const (
	smokeDeployments  = 6
	smokePhaseTimeout = time.Minute
)

// TestBench runs the benchmark: by default small and once (part of make
// test), with -full the baseline workload in full (`make bench`). Either
// way every milestone of every phase is reached in both modes (Run fails
// otherwise), the table has every row, the hub's writes are counted and
// the plots are written; with -out the table, the raw results and the
// plots go there, after each run too.
func TestBench(t *testing.T) {
	cfg := bench.Config{
		Deployments: smokeDeployments, Runs: 1, Nodes: 1, PhaseTimeout: smokePhaseTimeout,
		Dir: filepath.Join(t.TempDir(), "fleet"), BinDir: binDir, Logger: kit.TestLogger(t),
	}
	timeout := 5 * time.Minute
	if *full {
		cfg.Deployments, cfg.Runs, cfg.Nodes, cfg.PhaseTimeout = *deployments, *runs, 0, 0
		timeout = 2 * time.Hour
	}
	dir := *out
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Progress = func(r *bench.Results) {
		if err := r.Write(dir); err != nil {
			t.Error(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := bench.Run(ctx, cfg)
	if res != nil {
		if werr := res.Write(dir); werr != nil {
			t.Error(werr)
		}
		t.Log("\n" + res.Table())
	}
	if err != nil {
		t.Fatal(err)
	}
	checkTable(t, res)
	paths, err := res.Plot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 4 {
		t.Errorf("plots: %v, want 4", paths)
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("plot %s: %v", p, err)
		}
	}
	t.Logf("wrote %s/bench.md, results.json and %v", dir, paths)
}

// checkTable fails t unless the table has every milestone's row, every
// milestone was reached after t0, and the hub's writes were counted.
func checkTable(t *testing.T, res *bench.Results) {
	t.Helper()
	table := res.Table()
	for _, row := range []string{
		"| duplicated | create | " + bench.MExist + " |",
		"| duplicated | create | " + bench.MReady + " |",
		"| duplicated | create | " + bench.MAggregated + " |",
		"| duplicated | update | " + bench.MNewImage + " |",
		"| duplicated | update | " + bench.MRolledOut + " |",
		"| duplicated | update | " + bench.MAggRolled + " |",
		"| duplicated | delete | " + bench.MGone + " |",
		"| divided | create | " + bench.MAggregated + " |",
		"| divided | delete | " + bench.MGone + " |",
	} {
		if !strings.Contains(table, row) {
			t.Errorf("table has no row %q", row)
		}
	}
	for _, p := range res.Phases {
		for _, m := range p.Reached {
			if m.After <= 0 {
				t.Errorf("%s %s %s: %s reached at %s", p.Mode, p.Variant, p.Phase, m.Name, m.After)
			}
		}
		if p.Mode == bench.ModeTether && p.HubWrites <= 0 {
			t.Errorf("%s %s: no hub writes counted", p.Variant, p.Phase)
		}
	}
}
