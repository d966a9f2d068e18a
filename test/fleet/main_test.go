package fleet_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/fleet"
)

// binDir holds the tether-hub and tether-agent that TestMain built from
// this tree (so the test never runs stale binaries from bin/), or
// $TETHER_BIN when set (binaries built elsewhere, e.g. by CI).
var binDir string

// fleetFrame marks a goroutine running code of package fleet.
const fleetFrame = "github.com/tetherproj/tether/test/fleet."

// leakDeadline is how long TestMain waits for the fleet's goroutines (one
// reaper per process) to end after the tests; Stop waits for every process,
// so only scheduling delay remains.
const leakDeadline = 5 * time.Second

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if dir := os.Getenv(fleet.BinEnv); dir != "" {
		binDir = dir
		return checkLeaks(m.Run())
	}
	dir, err := os.MkdirTemp("", "tether-fleet-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/tether-hub", "./cmd/tether-agent")
	build.Dir = "../.."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build tether-hub and tether-agent: %v\n", err)
		return 1
	}
	binDir = dir
	return checkLeaks(m.Run())
}

// checkLeaks turns a passing run into a failure if fleet goroutines
// survived the tests.
func checkLeaks(code int) int {
	if code == 0 {
		if leaked := fleetGoroutines(leakDeadline); leaked != "" {
			fmt.Fprintf(os.Stderr, "fleet goroutines still running after the tests:\n%s\n", leaked)
			code = 1
		}
	}
	return code
}

// fleetGoroutines waits up to d for no goroutine to be running the fleet's
// code and returns the stacks of those that still are.
func fleetGoroutines(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaked []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, fleetFrame) && !strings.Contains(g, "fleet_test.") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
