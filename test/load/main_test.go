package load_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// binDir holds the tether-hub and tether-load that TestMain built from
// this tree (tether-hub from $TETHER_BIN when set).
var binDir string

// Frames whose goroutines must not survive the tests: the driver's and
// test/proc's reapers.
const (
	loadFrame = "github.com/tetherproj/tether/test/load."
	procFrame = "github.com/tetherproj/tether/test/proc."
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tether-load-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir = dir
	return leakcheck.Check(m.Run(), leakcheck.Filter{Only: []string{loadFrame, procFrame}, Ignore: []string{"load_test."}})
}

// build builds tether-load into dir, and tether-hub unless $TETHER_BIN
// has it (linked there).
func build(dir string) error {
	root, err := proc.RepoRoot()
	if err != nil {
		return err
	}
	pkgs := []string{"./test/load/cmd/tether-load"}
	if bin := os.Getenv(fleet.BinEnv); bin != "" {
		if err := os.Symlink(filepath.Join(bin, "tether-hub"), filepath.Join(dir, "tether-hub")); err != nil {
			return err
		}
	} else {
		pkgs = append(pkgs, "./cmd/tether-hub")
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %v: %w", pkgs, err)
	}
	return nil
}
