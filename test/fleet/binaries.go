package fleet

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/proc"
)

// TestBinaries returns the directory holding tether-hub and tether-agent
// for a test package's TestMain: $TETHER_BIN when set (binaries built
// elsewhere, e.g. by CI), else a temporary directory they are built into
// from this repository's source, so a test never runs stale binaries from
// bin/. remove deletes what it built (a no-op for $TETHER_BIN).
func TestBinaries() (dir string, remove func(), err error) {
	if dir := os.Getenv(BinEnv); dir != "" {
		return dir, func() {}, nil
	}
	root, err := proc.RepoRoot()
	if err != nil {
		return "", nil, err
	}
	dir, err = os.MkdirTemp("", "tether-test-bin-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.RemoveAll(dir) }
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/"+binHub, "./cmd/"+binAgent)
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		remove()
		return "", nil, fmt.Errorf("build %s and %s: %w", binHub, binAgent, err)
	}
	return dir, remove, nil
}

// RunTests is the TestMain of a test package that runs the fleet's
// binaries: it sets *binDir (TestBinaries), runs the tests, and turns a
// passing run into a failure when a goroutine that leaks counts survived
// them (internal/leakcheck). The goroutine running RunTests itself is
// never counted.
func RunTests(m *testing.M, binDir *string, leaks leakcheck.Filter) int {
	dir, remove, err := TestBinaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	*binDir = dir
	leaks.Ignore = append(leaks.Ignore, "test/fleet.RunTests")
	return leakcheck.Check(m.Run(), leaks)
}
