package ha_test

import (
	"os"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/fleet"
)

// binDir holds the tether-hub and tether-agent TestMain built from this
// tree, or $TETHER_BIN when set.
var binDir string

// Frames of goroutines that must end with the tests: this package's, the
// fault suite's watchers, the kit's and test/proc's process reapers.
var ownFrames = []string{
	"github.com/tetherproj/tether/test/ha.",
	"github.com/tetherproj/tether/test/faults.",
	"github.com/tetherproj/tether/test/proc.",
}

func TestMain(m *testing.M) {
	os.Exit(fleet.RunTests(m, &binDir, leakcheck.Filter{Only: ownFrames, Ignore: []string{"ha_test.TestMain"}}))
}
