package kit_test

import (
	"os"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
)

// kitFrame marks a goroutine running code of package kit (not kit_test).
const kitFrame = "github.com/tetherproj/tether/test/kit."

// procFrame marks a goroutine running code of test/proc, which the kit
// starts its processes with (a reaper per process).
const procFrame = "github.com/tetherproj/tether/test/proc."

// TestMain fails the package when the kit's goroutines outlive the tests:
// they end when their processes have been reaped, which Stop waits for. The
// helper process the teardown tests start skips the check.
func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv(helperEnv) == "" {
		code = leakcheck.Check(code, leakcheck.Filter{Only: []string{kitFrame, procFrame}, Ignore: []string{"kit_test.TestMain"}})
	}
	os.Exit(code)
}
