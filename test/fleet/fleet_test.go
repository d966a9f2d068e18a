package fleet_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/kit"
	"github.com/tetherproj/tether/test/manifests"
)

// web is one Deployment that every cluster runs in full.
var web = manifests.WebDeployment(2) + "---\n" + manifests.WebPolicy(`replicaScheduling:
  replicaSchedulingType: Duplicated`)

// testTimeout bounds the whole scenario: a fleet starts in some 10 s on two
// idle cores, the rollout takes a second or two. It is a deadline against a
// hang, not a figure: `make test` runs several packages at once beside the
// fault suite, and a fleet started on a loaded machine took over 40 s.
const testTimeout = 2 * time.Minute

// TestDuplicatedDeployment starts two clusters with a hub and two agents,
// applies a Duplicated Deployment, sees it Available in both members and
// in the hub's aggregated status, stops, and checks no process survives.
func TestDuplicatedDeployment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	f, err := fleet.Start(ctx, fleet.Options{Clusters: kit.Members(2), Dir: t.TempDir(), BinDir: binDir, Logger: kit.TestLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logTails(t, f)
		}
		f.Stop()
	})
	if got := roles(f.Processes()); got[fleet.RoleHub] != 1 || got[fleet.RoleAgent] != 2 || got[fleet.RoleCluster] == 0 {
		t.Fatalf("Processes() roles = %v; want 1 hub, 2 agents, cluster processes", got)
	}

	c, err := f.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Apply(ctx, []byte(web)); err != nil {
		t.Fatal(err)
	}
	for _, cl := range f.Kit.Clusters {
		if err := cl.WaitForDeployment(ctx, "default", "web"); err != nil {
			t.Fatalf("cluster %s: %v", cl.Name, err)
		}
	}
	ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	if err := c.WaitTemplate(ctx, ref, fleet.Replicas(4)); err != nil {
		t.Fatal(err)
	}
	p, err := c.GetPlacement(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.GetClusters()) != 2 {
		t.Errorf("placement clusters = %v; want both members", p.GetClusters())
	}

	procs := f.Processes()
	f.Stop()
	for _, p := range procs {
		if err := syscall.Kill(p.PID, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s %s %s (pid %d) still exists after Stop (kill 0: %v)", p.Role, p.Name, p.Component, p.PID, err)
		}
	}
}

func roles(procs []fleet.Process) map[string]int {
	out := map[string]int{}
	for _, p := range procs {
		out[p.Role]++
	}
	return out
}

// logTails prints the end of the hub's and the agents' logs.
func logTails(t *testing.T, f *fleet.Fleet) {
	for _, p := range f.Processes() {
		if p.Role != fleet.RoleCluster {
			t.Logf("--- last lines of %s ---\n%s", p.LogPath, fleet.LogTail(p.LogPath, 30))
		}
	}
}
