// Package security tests the hub's trust boundaries (DESIGN §8, issue 6)
// against real processes: tether-hub, tether-agent and tetherctl built once
// in TestMain, a data directory per test, real TLS. Bootstrap tokens, CA
// pinning, key binding and approval, roles, revocation and per-cluster
// isolation are checked the way an attacker or a careless operator would
// meet them.
package security

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetherproj/tether/test/proc"
)

// Binaries TestMain built.
var hubBin, agentBin, ctlBin string

// procs starts every long-running child process of the tests (test/proc);
// commands that must end by themselves (tetherctl, a refused agent) run
// with exec.CommandContext and a timeout.
var procs *proc.Spawner

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tether-security-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for bin, pkg := range map[*string]string{&hubBin: "tether-hub", &agentBin: "tether-agent", &ctlBin: "tetherctl"} {
		*bin = filepath.Join(dir, pkg)
		build := exec.Command("go", "build", "-o", *bin, "./cmd/"+pkg)
		build.Dir = "../.."
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n", pkg, err)
			return 1
		}
	}
	procs = proc.NewSpawner()
	defer procs.Close() // after m.Run: every test has stopped its processes
	return m.Run()
}
