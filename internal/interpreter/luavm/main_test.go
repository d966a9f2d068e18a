package luavm

import (
	"os"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
)

// TestMain fails the package if goroutines (memory watchers) outlive the tests.
func TestMain(m *testing.M) {
	os.Exit(leakcheck.Main(m, leakcheck.Filter{}))
}
