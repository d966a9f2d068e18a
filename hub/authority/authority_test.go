package authority

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/store"
)

func TestDecide(t *testing.T) {
	rec := &Record{Epoch: "e1", Revision: 100, Checkpoint: 7}
	cases := []struct {
		name string
		rec  *Record
		obs  Observed
		want string // substring of the reason; "" for authoritative
	}{
		{"first start", nil, Observed{Epoch: "e1", Created: true, Revision: 1}, ""},
		{"same store, grown", rec, Observed{Epoch: "e1", Revision: 150, Checkpoint: 7}, ""},
		{"wiped", rec, Observed{Epoch: "e2", Created: true, Revision: 3}, "wiped or replaced"},
		{"replaced", rec, Observed{Epoch: "e2", Revision: 500, Checkpoint: 9}, "was replaced"},
		{"restored", rec, Observed{Epoch: "e1", Revision: 90, Checkpoint: 7}, "older snapshot"},
		{"restored with bumped revision", rec, Observed{Epoch: "e1", Revision: 1000000, Checkpoint: 5}, "checkpoint 5"},
		{"recorded earlier", &Record{Epoch: "e1", NotAuthoritative: "lost data"}, Observed{Epoch: "e1", Revision: 900}, "lost data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.rec, c.obs)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("Decide(%s) = %q; want %q", c.name, got, c.want)
			}
		})
	}
}

// hubDirs is one hub's data directory: the embedded etcd under it and the
// CA directory next to it.
type hubDirs struct {
	t         *testing.T
	data, pki string
	ctx       context.Context
	st        *store.Store
}

func newHubDirs(t *testing.T) *hubDirs {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	h := &hubDirs{t: t, data: t.TempDir(), ctx: ctx}
	h.pki = filepath.Join(h.data, "pki")
	if err := os.MkdirAll(h.pki, 0o700); err != nil {
		t.Fatal(err)
	}
	return h
}

// start opens the store and checks it, as tether-hub does at start.
func (h *hubDirs) start(accept bool) *Authority {
	h.t.Helper()
	st, err := store.Open(h.ctx, store.Config{DataDir: h.data}, hclog.NewNullLogger())
	if err != nil {
		h.t.Fatalf("store.Open: %v", err)
	}
	h.st = st
	a, err := Check(h.ctx, st, h.pki, Options{Adopt: Adopt{Accept: accept}, Identity: "hub-1", Alone: true}, hclog.NewNullLogger())
	if err != nil {
		h.t.Fatalf("Check: %v", err)
	}
	return a
}

func (h *hubDirs) stop() {
	h.t.Helper()
	if err := h.st.Close(); err != nil {
		h.t.Fatalf("Close: %v", err)
	}
}

func (h *hubDirs) write(n int) {
	h.t.Helper()
	for i := range n {
		if _, err := h.st.Put(h.ctx, store.ClusterKey("c"), []byte{byte(i)}); err != nil {
			h.t.Fatal(err)
		}
	}
}

func wantAuthority(t *testing.T, a *Authority, ok bool, reason string) {
	t.Helper()
	got, why := a.Authoritative()
	if got != ok || !strings.Contains(why, reason) {
		t.Fatalf("Authoritative() = %v, %q; want %v, %q", got, why, ok, reason)
	}
}

// TestWipedStore: the store is wiped and the CA kept (the etcd directory
// removed). The hub is not authoritative, also after another restart,
// until the operator accepts the store; then it is, and stays so.
func TestWipedStore(t *testing.T) {
	h := newHubDirs(t)
	wantAuthority(t, h.start(false), true, "")
	h.write(3)
	h.stop()
	if err := os.RemoveAll(filepath.Join(h.data, "etcd")); err != nil {
		t.Fatal(err)
	}
	wantAuthority(t, h.start(false), false, "wiped")
	h.stop()
	wantAuthority(t, h.start(false), false, "wiped") // remembered
	h.stop()
	wantAuthority(t, h.start(true), true, "")
	h.stop()
	wantAuthority(t, h.start(false), true, "")
	h.stop()
}

// TestRestoredStore: the store's files are put back from an older backup
// (a snapshot of the etcd directory). Its revision is lower than the one
// the hub recorded: not authoritative.
func TestRestoredStore(t *testing.T) {
	h := newHubDirs(t)
	a := h.start(false)
	wantAuthority(t, a, true, "")
	h.write(2)
	h.stop()
	backup := filepath.Join(t.TempDir(), "etcd")
	if out, err := exec.Command("cp", "-a", filepath.Join(h.data, "etcd"), backup).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	a = h.start(false)
	h.write(20)
	if err := a.persist(h.ctx); err != nil { // what Run does every PersistInterval
		t.Fatalf("persist: %v", err)
	}
	h.stop()
	if err := os.RemoveAll(filepath.Join(h.data, "etcd")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", backup, filepath.Join(h.data, "etcd")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	wantAuthority(t, h.start(false), false, "older snapshot")
	h.stop()
}

// TestObserveAgent: an agent holding works for a cluster the store does
// not know makes the hub not authoritative; one the store knows, or one
// holding nothing (a first connection), does not.
func TestObserveAgent(t *testing.T) {
	h := newHubDirs(t)
	a := h.start(false)
	defer h.stop()
	if _, err := h.st.Put(h.ctx, store.ClusterKey("known"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	a.ObserveAgent(h.ctx, Lineage{Cluster: "known", HeldWorks: 5})
	a.ObserveAgent(h.ctx, Lineage{Cluster: "new"})
	wantAuthority(t, a, true, "")
	a.ObserveAgent(h.ctx, Lineage{Cluster: "lost", HeldWorks: 5})
	wantAuthority(t, a, false, `cluster "lost"`)
	rec, err := readRecord(h.pki)
	if err != nil || rec == nil || rec.NotAuthoritative == "" {
		t.Errorf("record after the loss = %+v, %v; want the reason recorded", rec, err)
	}
}

// TestVerifyAtRuntime: the store's data is wiped under a running hub (an
// external etcd whose keys were deleted): Verify, which Run and the
// renderer's relist call, finds it.
func TestVerifyAtRuntime(t *testing.T) {
	h := newHubDirs(t)
	a := h.start(false)
	defer h.stop()
	if err := a.Verify(h.ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	wantAuthority(t, a, true, "")
	if _, err := h.st.Delete(h.ctx, store.Root+"meta/epoch", 0); err != nil {
		t.Fatal(err)
	}
	if err := a.Verify(h.ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	wantAuthority(t, a, false, "wiped")
}

// TestRestoredDataDir: the whole data directory (etcd and the record next
// to the CA, as a volume snapshot holds them) is put back from a copy. The
// record cannot tell; an agent that saw a newer store revision can, at its
// first Hello: the hub is then not authoritative, also after a restart,
// until the operator accepts the store, which records an adoption for
// the agents.
func TestRestoredDataDir(t *testing.T) {
	h := newHubDirs(t)
	a := h.start(false)
	h.write(2)
	h.stop()
	backup := filepath.Join(t.TempDir(), "data")
	if out, err := exec.Command("cp", "-a", h.data, backup).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	a = h.start(false)
	h.write(20)
	seen, err := h.st.Revision(h.ctx) // what the agent was last told
	if err != nil {
		t.Fatal(err)
	}
	epoch := a.Epoch()
	h.stop()
	if err := os.RemoveAll(h.data); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", backup, h.data).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	a = h.start(false)
	wantAuthority(t, a, true, "") // nothing on the hub's side tells
	if a.Adoption() != nil {
		t.Errorf("Adoption before any = %+v; want none", a.Adoption())
	}
	a.ObserveAgent(h.ctx, Lineage{Cluster: "d", Epoch: "another-store", Revision: seen})
	wantAuthority(t, a, true, "") // another store's agent: its own concern
	h.write(30)                   // the store passes the agent's revision before it says hello
	a.ObserveAgent(h.ctx, Lineage{Cluster: "c", HeldWorks: 3, Epoch: epoch, Revision: seen})
	wantAuthority(t, a, false, "restored from an older copy")
	h.stop()
	wantAuthority(t, h.start(false), false, "restored from an older copy") // remembered
	h.stop()
	a = h.start(true)
	wantAuthority(t, a, true, "")
	ad := a.Adoption()
	if ad == nil || ad.ID == "" || len(ad.Identities) != 1 || ad.Identities[0] != "hub-1" {
		t.Fatalf("Adoption after --accept-store-reset = %+v; want one naming hub-1", ad)
	}
	h.stop()
	if again := h.start(false).Adoption(); again == nil || again.ID != ad.ID {
		t.Errorf("Adoption after a restart = %+v; want %s, read from the store", again, ad.ID)
	}
	h.stop()
}

// TestBehindAtRuntime: on a shared store (not alone), an agent that saw a
// revision the store has not reached makes the hub not authoritative; one
// the store has passed does not.
func TestBehindAtRuntime(t *testing.T) {
	h := newHubDirs(t)
	st, err := store.Open(h.ctx, store.Config{DataDir: h.data}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	h.st = st
	defer h.stop()
	a, err := Check(h.ctx, st, h.pki, Options{Identity: "hub-1"}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	h.write(5)
	rev, err := st.Revision(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.ObserveAgent(h.ctx, Lineage{Cluster: "c1", Epoch: a.Epoch(), Revision: rev})
	wantAuthority(t, a, true, "")
	a.ObserveAgent(h.ctx, Lineage{Cluster: "c2", Epoch: a.Epoch(), Revision: rev + 100})
	wantAuthority(t, a, false, "has not reached")
}

// TestAgentNewSinceStartIsNotARestore: an agent that had seen nothing of
// this store when it first said hello (a new agent, or one of another
// store) and comes back, after a restart of its own, having seen revisions
// this hub wrote since it started is not evidence of a restore. Before,
// a Hello without a revision was not counted, so the second one was taken
// for the cluster's first and compared with the revision at start: the
// fault suite's agent-kill9-during-delete made the hub not authoritative.
func TestAgentNewSinceStartIsNotARestore(t *testing.T) {
	h := newHubDirs(t)
	a := h.start(false)
	defer h.stop()
	for _, first := range []Lineage{
		{Cluster: "new"},
		{Cluster: "other", Epoch: "another-store", Revision: 3},
	} {
		a.ObserveAgent(h.ctx, first)
	}
	h.write(10)
	for _, cluster := range []string{"new", "other"} {
		if _, err := h.st.Put(h.ctx, store.ClusterKey(cluster), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := h.st.Revision(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, cluster := range []string{"new", "other"} {
		a.ObserveAgent(h.ctx, Lineage{Cluster: cluster, HeldWorks: 2, Epoch: a.Epoch(), Revision: rev})
		wantAuthority(t, a, true, "")
	}
}
