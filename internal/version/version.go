// Package version holds the build's version, stamped by the Makefile through
// -ldflags "-X github.com/tetherproj/tether/internal/version.Version=...".
// It imports only the standard library.
package version

import (
	"fmt"
	"runtime"
)

// Version and Commit are set at link time; a plain `go build` leaves the defaults.
var (
	Version = "v0.0.0-dev"
	Commit  = "unknown"
)

// String is the one-line form printed by every binary's --version.
func String(binary string) string {
	return fmt.Sprintf("%s %s (commit %s, %s)", binary, Version, Commit, runtime.Version())
}
