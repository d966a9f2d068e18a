package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRestConfigRateLimits: the member client is not left at client-go's
// default 5 requests per second, which throttled applies (issue 5's
// measurement: 100 works took ~40 s to reach a member).
func TestRestConfigRateLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := `apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: m, user: {token: t}}]
contexts: [{name: m, context: {cluster: m, user: m}}]
current-context: m
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := restConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.QPS != memberQPS || c.Burst != memberBurst {
		t.Errorf("restConfig QPS, Burst = %v, %d; want %d, %d", c.QPS, c.Burst, memberQPS, memberBurst)
	}
}
