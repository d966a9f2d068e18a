package faults_test

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/faults"
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

// answerDelay is how long the API server's answers take to reach edge-1's
// agent in agentKilledDuringDelete: the window in which the agent has
// deleted an object but not yet heard so, where the kill lands.
const answerDelay = 3 * time.Second

// agentKilledDuringDelete deletes nginx's template from the hub and kills
// edge-1's agent (SIGKILL) in the middle of its deletion: its member has
// deleted an object and the answer has not reached the agent yet (its
// proxy holds the answers back). The agent is restarted; the deletion
// must complete everywhere and nothing may come back: an agent that
// persisted the deletion before starting it resumes it rather than
// re-creating what it still holds.
func agentKilledDuringDelete(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	x.watch.Expect("nginx")
	x.watch.Expect("nginx-index")
	r := x.begin(t.Name())
	x.proxy("edge-1").SetDelay(answerDelay)
	defer x.proxy("edge-1").SetDelay(0)
	if _, err := x.client.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: nginxRef}); err != nil {
		t.Fatalf("delete nginx: %v", err)
	}
	if err := proc.Poll(ctx, 5*time.Millisecond, func(context.Context) error { return firstGone(x, "edge-1") }); err != nil {
		t.Fatal(err)
	}
	if err := x.fleet.Kill(fleet.RoleAgent, "edge-1"); err != nil {
		t.Fatal(err)
	}
	x.proxy("edge-1").SetDelay(0)
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

// firstGone says whether one of nginx's objects has left cluster's
// member.
func firstGone(x *fixture, cluster string) error {
	snap := x.watch.Snapshot()
	for _, tr := range tracked[:2] {
		if _, ok := snap[faults.Object{Cluster: cluster, Resource: tr.Resource, Namespace: tr.Namespace, Name: tr.Name}]; !ok {
			return nil
		}
	}
	return fmt.Errorf("nginx's objects all still in %s", cluster)
}

// copyDir copies directory src to dst (which must not exist), keeping
// modes: a cold copy of a stopped hub's etcd is a consistent snapshot.
func copyDir(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %w: %s", src, dst, err, out)
	}
	return nil
}
