package memberproxy_test

import (
	"os"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/fleet"
)

// binDir holds tether-hub and tether-agent (fleet.RunTests).
var binDir string

func TestMain(m *testing.M) {
	os.Exit(fleet.RunTests(m, &binDir, leakcheck.Filter{Only: []string{"github.com/tetherproj/tether/test/"}, Ignore: []string{"memberproxy_test."}}))
}
