// Package integration runs tether-hub as a real process (built once in
// TestMain) with a data directory of its own per test, and talks to it the
// way agents and clients do: gRPC over TLS with certificates from the hub's
// CA. Nothing is faked on the hub's side.
//
// The tests poll with deadlines, never sleep for a fixed time, and kill
// every hub they start (t.Cleanup), also when they fail.
package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// hubBin is the tether-hub binary TestMain built.
var hubBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tether-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	hubBin = filepath.Join(dir, "tether-hub")
	build := exec.Command("go", "build", "-o", hubBin, "./cmd/tether-hub")
	build.Dir = "../.."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build tether-hub: %v\n", err)
		return 1
	}
	return m.Run()
}
