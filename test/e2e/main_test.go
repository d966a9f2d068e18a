// Package e2e proves the agent's issue end to end with real parts only:
// tether-hub and tether-agent, from $TETHER_BIN or built once in TestMain
// (fleet.TestBinaries), run as processes, one hub (embedded etcd,
// 127.0.0.1) and one agent per member cluster of the kit (real
// kube-apiservers with kwok nodes, test/kit).
// Users' objects go in through the hub's ObjectService over mTLS with
// admin.conf's credentials; what happens in the members is read with
// client-go.
//
// TestE2E shares one hub and two clusters across ordered subtests (a
// later one starts from the state the earlier left): propagation with
// weights and overrides, drift repair and retained replicas, a CloneSet
// through the built-in customization, a hub outage with an agent restart,
// and a hub whose store was wiped. TestMeasure (TETHER_E2E_MEASURE=1 only)
// logs latency and the agent's idle cost; it asserts no wall time.
// TestAgentMemory bounds one agent's peak RSS over one member's share of
// issue 16's baseline workload.
// The hub outage step and TestAgentMemory are long tests (test/tier):
// `make test-long` runs them, `make test` leaves them out.
//
// Conditions are polled with deadlines, never awaited with fixed sleeps;
// the only timed waits are the hub outage and the idle window of a
// measurement, which are durations the scenario itself is about.
//
// Every process is started from one goroutine locked to its OS thread,
// in a process group of its own and with a parent-death signal, so the
// kernel kills it if the test binary dies; t.Cleanup stops it otherwise.
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/fleet"
	testproc "github.com/tetherproj/tether/test/proc"
)

// Binaries TestMain found or built (fleet.TestBinaries).
var (
	hubBin   string
	agentBin string
)

// procs starts every child process (test/proc).
var procs *testproc.Spawner

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, remove, err := fleet.TestBinaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	hubBin, agentBin = filepath.Join(dir, "tether-hub"), filepath.Join(dir, "tether-agent")
	procs = testproc.NewSpawner()
	code := m.Run()
	procs.Close()
	if code == 0 {
		if leaked := ownGoroutines(leakDeadline); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines of the tests still running after them:\n%s\n", leaked)
			code = 1
		}
	}
	return code
}

// leakDeadline is how long TestMain waits for the goroutines of this
// package, of the kit and of test/proc to end after the tests: they end
// when their processes have been reaped, so only scheduling delay remains.
const leakDeadline = 5 * time.Second

// ownGoroutines waits up to d for no goroutine to run this package's, the
// kit's or test/proc's code (TestMain's own excepted) and returns the stacks of those
// that still do.
func ownGoroutines(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			own := strings.Contains(g, "tether/test/e2e.") || strings.Contains(g, "tether/test/kit.") ||
				strings.Contains(g, "tether/test/proc.")
			if own && !strings.Contains(g, "e2e.TestMain") && !strings.Contains(g, "e2e.runMain") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
