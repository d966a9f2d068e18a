package fleet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherproj/tether/internal/leakcheck"
	"github.com/tetherproj/tether/test/proc"
)

// TestBinaries returns the directory holding the commands of cmd/ that a
// test package's TestMain needs (tether-hub and tether-agent when cmds is
// empty): $TETHER_BIN when set (binaries built elsewhere: by `make build`
// for `make test`, or by CI), else a temporary directory they are built
// into from this repository's source, so a test never runs stale binaries
// from bin/. remove deletes what it built (a no-op for $TETHER_BIN).
func TestBinaries(cmds ...string) (dir string, remove func(), err error) {
	if len(cmds) == 0 {
		cmds = []string{binHub, binAgent}
	}
	if dir := os.Getenv(BinEnv); dir != "" {
		for _, c := range cmds {
			if _, err := os.Stat(filepath.Join(dir, c)); err != nil {
				return "", nil, fmt.Errorf("%s=%s lacks %s (make build puts every command there): %w", BinEnv, dir, c, err)
			}
		}
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
	args := []string{"build", "-o", dir + "/"}
	for _, c := range cmds {
		args = append(args, "./cmd/"+c)
	}
	build := exec.Command("go", args...)
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		remove()
		return "", nil, fmt.Errorf("build %s: %w", strings.Join(cmds, ", "), err)
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

// HubWithTags returns the tether-hub binary built with the build tags
// tags from this repository's source, in a directory of the test's own: a
// fault scenario's hub with a fault hook (hub/render's renderfault).
func HubWithTags(t *testing.T, tags string) string {
	t.Helper()
	root, err := proc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), binHub)
	build := exec.Command("go", "build", "-tags", tags, "-o", bin, "./cmd/"+binHub)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s with -tags %s: %v\n%s", binHub, tags, err, out)
	}
	return bin
}
