package fleet_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/fleet"
)

// binDir holds the tether-hub and tether-agent that TestMain built from
// this tree (so the test never runs stale binaries from bin/), or
// $TETHER_BIN when set (binaries built elsewhere, e.g. by CI).
var binDir string

// fleetFrame marks a goroutine running code of package fleet.
const fleetFrame = "github.com/tetherproj/tether/test/fleet."

// procFrame marks a goroutine running code of test/proc, which the fleet
// (and its kit) start their processes with (a reaper per process).
const procFrame = "github.com/tetherproj/tether/test/proc."

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

// checkLeaks turns a passing run into a failure if fleet goroutines (one
// reaper per process) survived the tests; Stop waits for every process.
func checkLeaks(code int) int {
	return leakcheck.Check(code, leakcheck.Filter{Only: []string{fleetFrame, procFrame}, Ignore: []string{"fleet_test."}})
}
