package integration

import (
	"context"
	"slices"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// TestSyncDoneListsTheClusterWorksAfterAHubRestart: a template deleted
// while an agent is away, then a hub restart (its memory of the removal
// gone): the returning agent gets no WorkDelete, but an authoritative
// SyncDone whose key set lacks the work, so that the agent deletes it
// (agent/hubclient), however long it was away.
func TestSyncDoneListsTheClusterWorksAfterAHubRestart(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	a := dialAdmin(t, dir, h.addr)
	ctx := ctxFor(t)
	agentA, agentB := mintAgent(t, dir, "cluster-a"), mintAgent(t, dir, "cluster-b")
	sa, sb := connectReady(ctx, t, agentA, h.addr, nil), connectReady(ctx, t, agentB, h.addr, nil)
	defer sb.close()
	a.mustApply(ctx, deploymentYAML("web", "nginx:1.27", 2)+deploymentYAML("api", "api:1", 2)+policiesYAML)
	heldA := receiveWorks(t, sa, keyWeb, keyAPI)
	receiveWorks(t, sb, keyWeb, keyAPI)
	sa.close()

	// api's template is deleted while A is away; B, connected, sees the
	// removal, so the hub has rendered it before it stops.
	deleteObject(ctx, t, a, deployment("api"))
	waitDelete(t, sb, keyAPI)
	sb.close()
	h.kill()

	h2 := startHub(t, dir)
	sa2 := connectReady(ctx, t, agentA, h2.addr, heldA)
	defer sa2.close()
	for _, m := range sa2.sync {
		t.Errorf("initial sync after the restart sent %v; want nothing (web is current, api is forgotten)", m)
	}
	sd := sa2.syncDone
	if !sd.GetAuthoritative() || !slices.Equal(sd.GetWorkKeys(), []string{keyWeb}) {
		t.Errorf("SyncDone after the restart = %v; want authoritative with exactly [%s]", sd, keyWeb)
	}
}

func deleteObject(ctx context.Context, t *testing.T, a *admin, ref *hubv1.ObjectRef) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	if _, err := a.objects.Delete(ctx, &hubv1.DeleteRequest{Ref: ref}); err != nil {
		t.Fatalf("Delete %v: %v", ref, err)
	}
}

// waitDelete reads s until a WorkDelete of key, failing on a timeout.
func waitDelete(t *testing.T, s *stream, key string) {
	t.Helper()
	for {
		msg, err := s.next(workWait)
		if err != nil {
			t.Fatalf("no WorkDelete of %s: %v", key, err)
		}
		if msg.GetWorkDelete().GetWorkKey() == key {
			return
		}
	}
}
