package ha_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// restoreLoad is how many ConfigMaps are placed after the store's backup.
const restoreLoad = 10

// restoreHold is how long the suite watches the members once the replicas
// run on the restored store.
const restoreHold = 60 * time.Second

// storeRestored: the external etcd is restored from a cold copy of its
// members' data taken before restoreLoad more ConfigMaps were placed (every
// replica stopped, as a restore requires), and the replicas start again on
// it, hub-0 on an empty data directory (no record of the store to compare
// with). Every agent is made to stream to hub-0. The agents saw the newer
// store: nothing is deleted in the members, and the newer ConfigMaps stay.
func storeRestored(t *testing.T) {
	x := newFixture(t, options{load: restoreLoad})
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	b := x.snapshot(ctx)
	backup := t.TempDir()
	x.restartStore(ctx, func() error { return copyDirs(x.etcd.MemberDirs, backup) })
	l := x.startLoad(ctx, restoreLoad)
	if err := l.wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := x.waitInMembers(ctx, l.ackedNames(), cutServedBound); err != nil {
		t.Fatal(err)
	}
	restoredAt := time.Now()
	x.restartStore(ctx, func() error {
		for i, d := range x.etcd.MemberDirs {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
			if err := copyDir(filepath.Join(backup, filepath.Base(x.etcd.MemberDirs[i])), d); err != nil {
				return err
			}
		}
		return os.RemoveAll(x.hubs[0].Dir) // hub-0 starts with no record of the store
	})
	for k := range x.agents {
		if err := x.agentOnReplica(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(restoreHold) // watching the members, not waiting for a condition
	missing, err := x.missingInMembers(ctx, l.ackedNames())
	if err != nil {
		t.Fatal(err)
	}
	for c, m := range missing {
		t.Errorf("%s lost %d ConfigMaps placed after the backup the store was restored from: %v", c, len(m), m)
	}
	uids, deletes := x.checkUIDs(b), x.checkDeletes(ctx)
	t.Logf("FIGURES %s: restored_for=%s newer_configmaps=%d lost_in_members=%d uid_changes=%d member_deletes=%d",
		t.Name(), fig(time.Since(restoredAt)), len(l.ackedNames()), len(missing), uids, deletes)
}

// restartStore stops every replica and the etcd cluster, runs change on
// their files, and starts them again, waiting until they serve and every
// agent streams.
func (x *fixture) restartStore(ctx context.Context, change func() error) {
	t := x.t
	for _, r := range x.hubs {
		r.Terminate()
	}
	x.etcd.Stop()
	if err := change(); err != nil {
		t.Fatal(err)
	}
	if err := x.etcd.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range x.hubs {
		if err := r.Start(x.hubBin); err != nil {
			t.Fatal(err)
		}
		if err := r.WaitServing(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.agentsStreaming(ctx); err != nil {
		t.Fatal(err)
	}
}

// copyDirs copies each of dirs into dst (cp -a).
func copyDirs(dirs []string, dst string) error {
	for _, d := range dirs {
		if err := copyDir(d, filepath.Join(dst, filepath.Base(d))); err != nil {
			return err
		}
	}
	return nil
}

func copyDir(src, dst string) error {
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("cp -a %s %s: %w: %s", src, dst, err, out)
	}
	return nil
}
