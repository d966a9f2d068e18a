package grpcurl

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// grpcurlEnv names a grpcurl binary to use instead of the pinned one.
const grpcurlEnv = "TETHER_GRPCURL"

var (
	// binDir holds tether-hub and tetherctl, built by TestMain.
	binDir string
	// grpcurlBin is the pinned grpcurl.
	grpcurlBin string
	// repoRoot is the repository's root, where README.md is.
	repoRoot string
	// procs starts the hub (test/proc).
	procs *proc.Spawner
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	if repoRoot, err = proc.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, remove, err := fleet.TestBinaries("tether-hub", "tetherctl")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	binDir = dir
	if grpcurlBin, err = pinnedGrpcurl(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	procs = proc.NewSpawner()
	defer procs.Close()
	return m.Run()
}

// pinnedGrpcurl returns $TETHER_GRPCURL, or installs the grpcurl pinned in
// mk/proto.mk (if not installed yet) and returns its path: the last line
// `make grpcurl-path` prints.
func pinnedGrpcurl() (string, error) {
	if p := os.Getenv(grpcurlEnv); p != "" {
		return p, nil
	}
	var out bytes.Buffer
	cmd := exec.Command("make", "--no-print-directory", "-s", "-f", "mk/proto.mk", "grpcurl-path")
	cmd.Dir = repoRoot
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("install the pinned grpcurl (make -f mk/proto.mk grpcurl-path): %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	path := strings.TrimSpace(lines[len(lines)-1])
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("make grpcurl-path printed %q, not a path", out.String())
	}
	return path, nil
}
