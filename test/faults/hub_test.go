package faults_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tetherproj/tether/test/fleet"
)

// hubPaused freezes the hub (SIGSTOP) for d, as a VM pause or a long GC
// stall would, then lets it run again.
func hubPaused(d time.Duration) func(*testing.T, *fixture) {
	return func(t *testing.T, x *fixture) {
		r := x.begin(t.Name())
		if err := x.fleet.Signal(fleet.RoleHub, "hub", syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer x.fleet.Signal(fleet.RoleHub, "hub", syscall.SIGCONT) // also when the test fails
		// The pause itself, not a condition.
		time.Sleep(d)
		if err := x.fleet.Signal(fleet.RoleHub, "hub", syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		r.healed()
		r.converge()
		r.finish()
	}
}

// appliesBeforeKill is how many applies go through before the hub is
// killed in hubKilledDuringApplies; more follow while it is down and once
// it is back.
const appliesBeforeKill = 10

// hubDown is how long the hub stays dead after a kill -9 (a crash and a
// supervisor's restart delay).
const hubDown = 5 * time.Second

// hubKilledDuringApplies changes nginx's template (an annotation) in a
// stream of applies, kills the hub (SIGKILL) in the middle of them,
// restarts it, and applies once more. The members keep their objects and
// end with the last change.
func hubKilledDuringApplies(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	stop := make(chan struct{})
	done := make(chan int, 1)
	var applied atomic.Int64
	go func() { done <- x.applyLoop(ctx, stop, &applied) }()
	waitApplies(ctx, t, &applied, appliesBeforeKill)
	if err := x.fleet.Kill(fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(hubDown) // the outage itself, not a condition
	if err := x.fleet.Restart(ctx, fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
	close(stop)
	last := <-done
	r.healed()
	r.converge()
	x.waitAnnotation(ctx, last)
	r.finish()
}

// hubRestartedWithStore kills the hub, lets change rewrite its data
// directory (the CA and admin.conf stay), and starts it again.
func hubRestartedWithStore(ctx context.Context, t *testing.T, x *fixture, change func(etcdDir string) error) {
	if err := x.fleet.Kill(fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
	if err := change(filepath.Join(x.fleet.HubDir, "etcd")); err != nil {
		t.Fatal(err)
	}
	if err := x.fleet.Restart(ctx, fleet.RoleHub, "hub"); err != nil {
		t.Fatal(err)
	}
}

// orphanWindow is how long a scenario that lost the hub's store watches
// the members: twice the agents' shortened --eviction-grace (30 s), so
// that whatever the agents would orphan has been deleted by then.
const orphanWindow = 60 * time.Second

// storeWiped: the hub's store is lost (etcd's directory removed) while its
// CA is kept, so every agent is still accepted. Nothing may be deleted in
// the members until an operator says so; then the examples are applied
// again and the members must be as before.
func storeWiped(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	hubRestartedWithStore(ctx, t, x, os.RemoveAll)
	r.hold(orphanWindow)
	x.applyExamples(ctx)
	r.healed()
	r.converge()
	r.finish()
}

// storeRestored: the hub's store is restored from a cold copy taken before
// a newer placement (a ConfigMap of its own), so the restored hub knows
// nothing of it. Nothing may be deleted in the members: the regression
// must be detected.
func storeRestored(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	snapshot := filepath.Join(t.TempDir(), "etcd")
	hubRestartedWithStore(ctx, t, x, func(dir string) error { return copyDir(dir, snapshot) })
	waitReady(ctx, t, x)
	if _, err := x.client.Apply(ctx, []byte(newerPlacement)); err != nil {
		t.Fatal(err)
	}
	x.waitObject(ctx, configMaps, "faults-newer")
	r := x.begin(t.Name())
	hubRestartedWithStore(ctx, t, x, func(dir string) error {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		return copyDir(snapshot, dir)
	})
	r.hold(orphanWindow)
	r.healed()
	r.finish()
}
