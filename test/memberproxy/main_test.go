package memberproxy_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/fleet"
)

// binDir holds tether-hub, tether-agent and tetherctl (fleet.TestBinaries).
var binDir string

func TestMain(m *testing.M) {
	dir, remove, err := fleet.TestBinaries("tether-hub", "tether-agent", "tetherctl")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := leakcheck.Check(m.Run(), leakcheck.Filter{Only: []string{"github.com/tetherproj/tether/test/"}, Ignore: []string{"memberproxy_test."}})
	remove()
	os.Exit(code)
}
