package security

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTokensRefused: a token works once when single-use; an already-used,
// expired, deleted, malformed or wrong-cluster token is UNAUTHENTICATED,
// and the message says why.
func TestTokensRefused(t *testing.T) {
	h := startHub(t)
	single := createToken(t, h, "--uses", "1")
	if _, err := register(t, h, single, "edge-1", nil); err != nil {
		t.Fatalf("Register with a fresh single-use token: %v", err)
	}
	bound := createToken(t, h, "--cluster", "edge-9")
	deleted := createToken(t, h)
	mustCtl(t, h.adminConf(), "token", "delete", strings.Split(deleted.Token, ".")[0])
	list := mustCtl(t, h.adminConf(), "token", "list")
	if strings.Contains(list, strings.Split(deleted.Token, ".")[0]) || strings.Contains(list, strings.Split(single.Token, ".")[1]) {
		t.Errorf("token list shows a deleted token or a secret:\n%s", list)
	}
	// The short token is created last: creating and listing tokens prune
	// the expired ones, and on a loaded machine the calls above took over
	// its second, so it was gone ("unknown token") instead of expired.
	short := createToken(t, h, "--ttl", "1s")
	time.Sleep(1100 * time.Millisecond) // the only way for a token to expire: its ttl passing
	malformed := single
	malformed.Token = "not-a-token"
	wrongSecret := bound
	wrongSecret.Token = strings.Split(bound.Token, ".")[0] + ".0000000000000000"
	tests := []struct {
		name string
		tok  token
		want string
	}{
		{"already used", single, "used up"},
		{"expired", short, "expired"},
		{"deleted", deleted, "unknown token"},
		{"malformed", malformed, "malformed"},
		{"wrong secret", wrongSecret, "wrong secret"},
		{"other cluster", bound, "only cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := register(t, h, tt.tok, "edge-2", nil)
			if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Register = %v; want Unauthenticated saying %q", err, tt.want)
			}
		})
	}
}

// TestAgentRefusesWrongCAHash: tether-agent given another CA's hash exits
// non-zero, says so, and the hub never sees its token; with a bad token it
// exits at once too (no retry of a credential that cannot work).
func TestAgentRefusesWrongCAHash(t *testing.T) {
	h := startHub(t)
	tok := createToken(t, h)
	wrong := "sha256:" + strings.Repeat("0", 64)
	out, code := runAgent(t, h, tok.Token, wrong, "edge-1")
	if code == 0 || !strings.Contains(out, "does not match --ca-hash") {
		t.Errorf("tether-agent with a wrong --ca-hash: exit %d, output:\n%s\nwant non-zero and the mismatch named", code, out)
	}
	if data, _ := os.ReadFile(h.log); strings.Contains(string(data), "edge-1") {
		t.Errorf("the hub heard of edge-1 although the agent's CA pin did not match")
	}
	out, code = runAgent(t, h, strings.Split(tok.Token, ".")[0]+".0000000000000000", tok.CAHash, "edge-1")
	if code == 0 || !strings.Contains(out, "wrong secret") {
		t.Errorf("tether-agent with a bad token: exit %d, output:\n%s\nwant non-zero and the reason", code, out)
	}
}

// runAgent runs tether-agent to register and returns its output and exit
// code; it must end by itself.
func runAgent(t *testing.T, h *hubProc, tok, hash, cluster string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fakeKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentBin, "--hub", h.addr, "--token", tok, "--ca-hash", hash, "--cluster", cluster,
		"--kubeconfig", kubeconfig, "--data-dir", filepath.Join(dir, "data"))
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("tether-agent did not exit within %s: it retried a refusal\n%s", cmdTimeout, out)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// fakeKubeconfig names a member cluster nobody serves: the tests end
// before the agent needs one.
const fakeKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: m, user: u}}]
current-context: c
`

// TestNewKeyNeedsApproval: a registered name refuses another key
// (FAILED_PRECONDITION) until `tetherctl cluster approve`; then the new key
// registers and the old certificate can no longer connect.
func TestNewKeyNeedsApproval(t *testing.T) {
	h := startHub(t)
	tok := createToken(t, h)
	old, err := register(t, h, tok, "edge-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, newKey, _ := newKeyPEM(t)
	if _, err := register(t, h, tok, "edge-1", newKey); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "approve") {
		t.Fatalf("Register(edge-1, new key) = %v; want FailedPrecondition asking for approval", err)
	}
	if _, err := register(t, h, tok, "edge-1", newKey); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Register(edge-1, new key) again = %v; want still refused", err)
	}
	if _, errOut, code := ctl(t, h.adminConf(), "cluster", "approve", "edge-1"); code == 0 || !strings.Contains(errOut, "--key-fingerprint: required") {
		t.Errorf("approve without the key's fingerprint: exit %d, %q; want refused", code, errOut)
	}
	fp := pendingKey(t, h, "edge-1")
	mustCtl(t, h.adminConf(), "cluster", "approve", "edge-1", "--key-fingerprint", fp)
	if _, err := register(t, h, tok, "edge-1", newKey); err != nil {
		t.Fatalf("Register(edge-1, approved key) = %v; want success", err)
	}
	if _, err := openStream(t, h, old); status.Code(err) != codes.PermissionDenied {
		t.Errorf("Connect with the replaced certificate = %v; want PermissionDenied", err)
	}
	if _, errOut, code := ctl(t, h.adminConf(), "cluster", "approve", "edge-1", "--key-fingerprint", fp); code == 0 || !strings.Contains(errOut, "no key awaiting approval") {
		t.Errorf("approve with nothing pending: exit %d, %q; want refused", code, errOut)
	}
}

// pendingKey returns the fingerprint `tetherctl cluster pending` shows for
// cluster.
func pendingKey(t *testing.T, h *hubProc, cluster string) string {
	t.Helper()
	for _, line := range strings.Split(mustCtl(t, h.adminConf(), "cluster", "pending"), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == cluster {
			return f[1]
		}
	}
	t.Fatalf("tetherctl cluster pending lists no key for %s", cluster)
	return ""
}

func newKeyPEM(t *testing.T) ([]byte, []byte, error) {
	t.Helper()
	csr, key, err := certsNewCSR()
	if err != nil {
		t.Fatal(err)
	}
	return csr, key, nil
}
