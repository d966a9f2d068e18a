// Package integration runs tether-hub as a real process (built once in
// TestMain) with a data directory of its own per test, and talks to it the
// way agents and clients do: gRPC over TLS with certificates from the hub's
// CA. Nothing is faked on the hub's side.
//
// The tests poll with deadlines, never sleep for a fixed time, and kill
// every process they start (test/proc, t.Cleanup), also when they fail.
package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// hubBin is the tether-hub binary TestMain found or built (fleet.TestBinaries).
var hubBin string

// procs starts every child process of the tests (test/proc).
var procs *proc.Spawner

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, remove, err := fleet.TestBinaries("tether-hub")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	hubBin = filepath.Join(dir, "tether-hub")
	procs = proc.NewSpawner()
	defer procs.Close() // after m.Run: every test has stopped its processes
	return m.Run()
}
