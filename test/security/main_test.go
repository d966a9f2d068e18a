// Package security tests the hub's trust boundaries (DESIGN §8, issues 6
// and 14) against real processes: tether-hub, tether-agent and tetherctl
// from $TETHER_BIN or built once in TestMain, a data directory per test,
// real TLS. Bootstrap tokens, CA pinning, key binding and approval,
// roles, revocation and per-cluster isolation are checked the way an attacker or a careless
// operator would meet them.
//
// The hostile-input suite (TestHostileInputs, TestHostileConnections,
// TestHostileNewClusters) runs each attack against one hub while a probe
// applies a ConfigMap as an admin and sends heartbeats on healthy clusters'
// streams (probe_test.go; it goes round several bystanders, because the hub
// writes one cluster's state change at once only once per content
// interval: bystanders_test.go); after
// each attack every probe call must have succeeded, every probe apply must
// still be readable and the hub must still serve (runAttack). The probe's
// latencies (p50, p99, max) and the hub's VmRSS before and after are
// logged per attack and, when TETHER_SECURITY_REPORT names a file, written
// to it as Markdown and beside it as JSON (`make security-report`).
// Time is measured, never asserted.
//
// Adding an attack is adding one entry:
//   - one call that must be refused with a gRPC code and a message: a
//     hostileCase in hostileCases (inputs), roleCases or tokenCases
//     (credentials_test.go);
//   - anything else: an attack{name, run} in containedAttacks
//     (attacks_test.go; its connection and stream floods are in
//     connections_test.go, its webhooks in webhook_test.go), whose run makes
//     the attack, fails the test unless it was refused or contained, and
//     returns a one-line outcome; one that needs other hub flags goes in a
//     test of its own that starts its hostileEnv with them and calls
//     runAttacks, as TestHostileConnections does.
//
// The parties an attack may use are hostileEnv's: an admin and a viewer
// connection, the hostile cluster's registration (openStream,
// agentExchange), a bootstrap token, the hub's log (h.log). Agent message
// floods and oversized heartbeats are in agentfloods_test.go, stalled
// watches in stalled_test.go, a hanging webhook in hookhang_test.go,
// revoked users and pending keys in credentials_attacks_test.go, cordoned
// new clusters and heartbeat coalescing (watched in an etcd of the test's
// own) in newclusters_test.go.
package security

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// Binaries TestMain found or built (fleet.TestBinaries).
var hubBin, agentBin, ctlBin string

// procs starts every long-running child process of the tests (test/proc);
// commands that must end by themselves (tetherctl, a refused agent) run
// with exec.CommandContext and a timeout.
var procs *proc.Spawner

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, remove, err := fleet.TestBinaries("tether-hub", "tether-agent", "tetherctl")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer remove()
	hubBin, agentBin, ctlBin = filepath.Join(dir, "tether-hub"), filepath.Join(dir, "tether-agent"), filepath.Join(dir, "tetherctl")
	procs = proc.NewSpawner()
	defer procs.Close() // after m.Run: every test has stopped its processes
	code := m.Run()
	if err := suiteReport.write(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}
