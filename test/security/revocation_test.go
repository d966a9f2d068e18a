package security

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// TestRemovedClusterIsDisconnected: `tetherctl cluster remove` ends the
// cluster's live stream within one second with Goodbye CLUSTER_REMOVED, and
// its certificate cannot connect again; another cluster is untouched.
func TestRemovedClusterIsDisconnected(t *testing.T) {
	h := startHub(t)
	tok := createToken(t, h)
	regA, err := register(t, h, tok, "edge-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	regB, err := register(t, h, tok, "edge-b", nil)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := openStream(t, h, regA)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := openStream(t, h, regB)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	mustCtl(t, h.adminConf(), "cluster", "remove", "edge-a")
	bye, err, ended := sa.ended(time.Second + time.Since(start))
	took := time.Since(start)
	switch {
	case !ended:
		t.Fatalf("the removed cluster's stream was still open %s after remove was called", took)
	case bye.GetReason() != agentv1.DisconnectReason_DISCONNECT_REASON_CLUSTER_REMOVED:
		t.Errorf("removed stream ended with goodbye %v (status %v); want CLUSTER_REMOVED", bye, err)
	}
	t.Logf("stream ended %s after `tetherctl cluster remove` was started (process start included)", took.Round(time.Millisecond))
	if _, err := openStream(t, h, regA); status.Code(err) != codes.PermissionDenied {
		t.Errorf("Connect with the removed cluster's certificate = %v; want PermissionDenied", err)
	}
	if err := sb.heartbeat(); err != nil {
		t.Errorf("the other cluster's stream: %v; want it untouched", err)
	}
	if _, _, ended := sb.ended(200 * time.Millisecond); ended {
		t.Errorf("the other cluster's stream ended with the removal")
	}
	if _, errOut, code := ctl(t, h.adminConf(), "cluster", "remove", "edge-a"); code == 0 || !statusMessage(errOut, "not registered") {
		t.Errorf("remove twice: exit %d, %q; want not found", code, errOut)
	}
}
