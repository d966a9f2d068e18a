package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// TestAgentRegistersAndConnects: tether-agent with a token and the right
// pin writes its key (0600), certificate and the pinned CA into its data
// directory and opens its stream with them; restarted, it reuses them
// instead of registering again (the single-use token is spent).
func TestAgentRegistersAndConnects(t *testing.T) {
	h := startHub(t)
	tok := createToken(t, h, "--uses", "1", "--cluster", "edge-1")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fakeKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--hub", h.addr, "--token", tok.Token, "--ca-hash", tok.CAHash, "--cluster", "edge-1",
		"--kubeconfig", kubeconfig, "--data-dir", data}
	for run := 1; run <= 2; run++ {
		logf := filepath.Join(dir, fmt.Sprintf("agent-%d.log", run))
		p, err := proc.Start(procs, proc.Config{Name: fmt.Sprintf("tether-agent run %d", run), Bin: agentBin, Args: args, LogPath: logf})
		if err != nil {
			t.Fatal(err)
		}
		proc.StopAtEnd(t, p, stopGrace)
		poll(t, 30*time.Second, "the agent's stream in the hub's log", func() (bool, string) {
			hubLog, _ := os.ReadFile(h.log)
			agentLog, _ := os.ReadFile(logf)
			return strings.Count(string(hubLog), "agent stream started") >= run, string(agentLog)
		})
		if !p.Stop(stopGrace) {
			t.Errorf("tether-agent did not stop within %s of SIGTERM; killed", stopGrace)
		}
		if agentLog, _ := os.ReadFile(logf); run == 2 && strings.Contains(string(agentLog), "registered with the hub") {
			t.Errorf("the restarted agent registered again; want it to reuse its certificate:\n%s", agentLog)
		}
	}
	info, err := os.Stat(filepath.Join(data, "tls.key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("tls.key: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	for _, f := range []string{"tls.crt", "ca.crt"} {
		if _, err := os.Stat(filepath.Join(data, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
