package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tetherproj/tether/test/kit"
)

// agentProc is the agent of one member cluster: its credentials and data
// directory outlive its runs (restarts, re-pointing at another hub), and
// every run stops when owner ends.
type agentProc struct {
	owner   testing.TB
	cluster *kit.Cluster
	certs   string // ca.crt, tls.crt, tls.key from mint-agent
	dataDir string // --data-dir, the works it holds
	hubAddr string
	*proc   // the current run; nil before the first start
}

// newAgent mints credentials for cluster from the hub's CA; start runs it.
func newAgent(t, owner testing.TB, h *hubProc, c *kit.Cluster) *agentProc {
	t.Helper()
	a := &agentProc{owner: owner, cluster: c, dataDir: owner.TempDir(), hubAddr: h.addr}
	a.mint(t, h)
	return a
}

// mint issues a new certificate for the agent's cluster from h's CA, with
// h's CA as the agent's --ca (read at start: a restart picks them up).
func (a *agentProc) mint(t testing.TB, h *hubProc) {
	t.Helper()
	a.certs = a.owner.TempDir()
	out, err := exec.Command(hubBin, "mint-agent", "--data-dir", h.dir, "--cluster", a.cluster.Name, "--out", a.certs).CombinedOutput()
	if err != nil {
		t.Fatalf("mint-agent %s: %v\n%s", a.cluster.Name, err, out)
	}
}

// start runs the agent (again) with debug logs, in a new log file.
func (a *agentProc) start(t testing.TB) {
	t.Helper()
	a.proc = startProc(t, a.owner, "tether-agent-"+a.cluster.Name, agentBin,
		"--hub", a.hubAddr,
		"--cert", filepath.Join(a.certs, "tls.crt"), "--key", filepath.Join(a.certs, "tls.key"),
		"--ca", filepath.Join(a.certs, "ca.crt"),
		"--kubeconfig", a.cluster.KubeconfigPath, "--data-dir", a.dataDir,
		"-log-level", "debug")
}

// Agent log lines the tests look for (agent/hubclient).
const (
	logWelcomed = "welcomed by the hub"
	logSynced   = "synced with the hub"
	logDeleted  = "work deleted"
	logEvicted  = "evicting orphaned work"
)
