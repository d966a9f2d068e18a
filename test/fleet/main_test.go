package fleet_test

import (
	"os"
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
	// Stop waits for every process, so no reaper (one per process) may
	// survive the tests.
	os.Exit(fleet.RunTests(m, &binDir, leakcheck.Filter{Only: []string{fleetFrame, procFrame}, Ignore: []string{"fleet_test."}}))
}
