package roles

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// TestBookFollowsTheStore: a grant set through one Book (one replica) is
// what another answers, before it has listed (from the store) and after
// (from its watch, which closes Changed); a stored grant replaces the
// certificate's role, an unreadable record grants nothing, and a name
// without a record keeps its certificate's role.
func TestBookFollowsTheStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	vb := newView(t, st)
	a, b := New(st, newView(t, st), hclog.NewNullLogger()), New(st, vb, hclog.NewNullLogger())
	editorA := Grant{Role: Editor, Namespaces: []string{"team-a"}}
	if _, err := a.Set(ctx, "alice", editorA, "root"); err != nil {
		t.Fatal(err)
	}
	want := func(id pki.Identity, w Grant) {
		t.Helper()
		g, err := b.GrantOf(ctx, id)
		if err != nil || !cmp.Equal(g, w) {
			t.Errorf("GrantOf(%v) = %v, %v; want %v", id, g, err, w)
		}
	}
	want(pki.Identity{Name: "alice", Kind: pki.KindAdmin}, editorA) // before b listed
	want(pki.Identity{Name: "carol", Kind: pki.KindViewer}, Grant{Role: Viewer})
	want(pki.Identity{Name: "dave", Kind: pki.KindUser}, Grant{})

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- vb.Run(runCtx) }()
	go func() { done <- b.Run(runCtx) }()
	defer func() { stop(); <-done; <-done }()
	changed := b.Changed()
	if _, err := a.Set(ctx, "alice", Grant{Role: Viewer, Namespaces: []string{"team-c"}}, "root"); err != nil {
		t.Fatal(err)
	}
	for g, _ := b.GrantOf(ctx, pki.Identity{Name: "alice", Kind: pki.KindUser}); g.Role != Viewer; g, _ = b.GrantOf(ctx, pki.Identity{Name: "alice", Kind: pki.KindUser}) {
		select {
		case <-changed:
			changed = b.Changed()
		case <-ctx.Done():
			t.Fatalf("GrantOf(alice) after a change through another replica = %v; want viewer of team-c", g)
		}
	}
	changed = b.Changed()
	if _, err := st.Put(ctx, store.UserRoleKey("carol"), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	for g, _ := b.GrantOf(ctx, pki.Identity{Name: "carol", Kind: pki.KindAdmin}); g.Role != ""; g, _ = b.GrantOf(ctx, pki.Identity{Name: "carol", Kind: pki.KindAdmin}) {
		select {
		case <-changed:
			changed = b.Changed()
		case <-ctx.Done():
			t.Fatalf("GrantOf(carol) with an unreadable record = %v; want no role", g)
		}
	}
	all, err := b.All(ctx)
	if err != nil || len(all) != 2 || all[0].Name != "alice" || all[0].By != "root" || all[1].Name != "carol" || all[1].Role != "" {
		t.Errorf("All = %+v, %v; want alice (viewer, set by root) and carol (no role)", all, err)
	}
}

// TestUserCreatedThroughAnotherReplicaBeforeThisOneFollowed: a replica
// whose book is loaded but has not yet seen a user created through
// another replica asks the store for a user certificate's role instead of
// refusing the user (found by hub's TestUserRevokedThroughOneReplicaIsRefusedByAll,
// which failed "bob has no role" when replica B lagged).
func TestUserCreatedThroughAnotherReplicaBeforeThisOneFollowed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a, lagging := New(st, newView(t, st), hclog.NewNullLogger()), New(st, newView(t, st), hclog.NewNullLogger())
	lagging.records.Load(map[string]Record{}) // listed before bob existed, watch not yet caught up
	viewerX := Grant{Role: Viewer, Namespaces: []string{"team-x"}}
	if _, err := a.Set(ctx, "bob", viewerX, "root"); err != nil {
		t.Fatal(err)
	}
	if g, err := lagging.GrantOf(ctx, pki.Identity{Name: "bob", Kind: pki.KindUser}); err != nil || !cmp.Equal(g, viewerX) {
		t.Errorf("GrantOf(bob) on the lagging replica = %v, %v; want %v", g, err, viewerX)
	}
	if g, err := lagging.GrantOf(ctx, pki.Identity{Name: "nobody", Kind: pki.KindUser}); err != nil || g.Role != "" {
		t.Errorf("GrantOf(nobody) = %v, %v; want no role", g, err)
	}
}

// newView is a replica's view holding the records' prefix; not running.
func newView(t *testing.T, st *store.Store) *view.View {
	t.Helper()
	v, err := view.New(st, []view.Prefix{Prefix()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return v
}
