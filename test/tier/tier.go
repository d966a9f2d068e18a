// Package tier says which tests `make test` runs and which only
// `make test-long` does: the long tests, which spend their time waiting
// out a duration their check is about (a hub down 60 s, a certificate
// with a one-minute lifetime, a starved process) or load thousands of
// objects. A long test starts with Long(t); without TETHER_TESTS=long it
// is skipped, the message naming the target that runs it, and CI
// (.ci/run) runs that target after `make test`, so every check still runs
// there.
//
// The fault and HA suites have tiers of their own (TETHER_FAULTS in
// test/faults, TETHER_HA in test/ha; `make faults`, `make ha`).
package tier

import (
	"os"
	"testing"
)

// Env names the environment variable that selects the long tests:
// "long" runs them (`make test-long` sets it).
const Env = "TETHER_TESTS"

// Target is the make target that runs the long tests.
const Target = "make test-long"

// Long skips t unless Env is "long"; the skip says why t is long (why,
// such as "waits out a one-minute certificate") and which target runs it.
func Long(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(Env) != "long" {
		t.Skipf("long test (%s): runs in %s (%s=long)", why, Target, Env)
	}
}
