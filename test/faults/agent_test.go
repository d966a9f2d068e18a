package faults_test

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/fleet"
	"github.com/tetherproj/tether/test/proc"
)

// agentDown is how long edge-1's agent stays dead after its kill -9 in
// agentKilledDuringDelete.
const agentDown = 2 * time.Second

// goneFor is how long the deleted objects must stay deleted once gone.
const goneFor = 30 * time.Second

// agentPaused freezes edge-1's agent (SIGSTOP) for d, which the hub sees
// as a partition (the first demo scenario), then lets it run.
func agentPaused(d time.Duration) func(*testing.T, *fixture) {
	return func(t *testing.T, x *fixture) {
		r := x.begin(t.Name())
		if err := x.fleet.Signal(fleet.RoleAgent, "edge-1", syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer x.fleet.Signal(fleet.RoleAgent, "edge-1", syscall.SIGCONT) // also when the test fails
		r.hold(d)
		if err := x.fleet.Signal(fleet.RoleAgent, "edge-1", syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		r.healed()
		r.converge()
		r.finish()
	}
}

// agentKilledDuringDelete deletes nginx's template from the hub and kills
// edge-1's agent (SIGKILL) at once, while it deletes, then restarts it.
// The deletion must complete everywhere and nothing may come back: an
// agent resumes a deletion it had started rather than re-creating it.
func agentKilledDuringDelete(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	x.watch.Expect("nginx")
	x.watch.Expect("nginx-index")
	r := x.begin(t.Name())
	if _, err := x.client.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: nginxRef}); err != nil {
		t.Fatalf("delete nginx: %v", err)
	}
	if err := x.fleet.Kill(fleet.RoleAgent, "edge-1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(agentDown) // the crash itself, not a condition
	if err := x.fleet.Restart(ctx, fleet.RoleAgent, "edge-1"); err != nil {
		t.Fatal(err)
	}
	r.healed()
	err := proc.Poll(ctx, time.Second, func(context.Context) error {
		if left := len(x.watch.Snapshot()); left > 0 {
			return fmt.Errorf("%d objects of nginx left in the members", left)
		}
		return nil
	})
	if err != nil {
		t.Errorf("nginx not deleted everywhere: %v", err)
	}
	r.hold(goneFor)
	for _, o := range x.watch.Recreates() {
		t.Errorf("%s: re-created after its deletion at fault+%s", o.Object, o.At.Sub(r.faultAt).Round(100*time.Millisecond))
	}
	if left := x.watch.Snapshot(); len(left) > 0 {
		t.Errorf("objects back in the members %s after the deletion: %v", goneFor, left)
	}
	r.finish()
}

// copyDir copies directory src to dst (which must not exist), keeping
// modes: a cold copy of a stopped hub's etcd is a consistent snapshot.
func copyDir(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %w: %s", src, dst, err, out)
	}
	return nil
}
