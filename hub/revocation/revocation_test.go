package revocation

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/pki"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// TestRevocationFollowsTheStore: a revocation stored through one List
// (one replica) is refused by another, before it has listed (from the
// store) and after (from its watch); a certificate of the name issued
// after the revocation, and an agent's certificate of that name, pass.
func TestRevocationFollowsTheStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ca, err := pki.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	issue := func(name string, kind pki.Kind) pki.Issued {
		t.Helper()
		is, err := ca.IssueClient(pki.Identity{Name: name, Kind: kind}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return is
	}
	bob, bobAgent, carol := issue("bob", pki.KindViewer), issue("bob", pki.KindAgent), issue("carol", pki.KindAdmin)

	vb := newView(t, st)
	a, b := New(st, newView(t, st), hclog.NewNullLogger()), New(st, vb, hclog.NewNullLogger())
	r, err := a.Revoke(ctx, "bob", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Check(ctx, bob.Cert); !errors.Is(err, ErrRevoked) || !strings.Contains(err.Error(), `user "bob" was revoked`) || !strings.Contains(err.Error(), "by alice") {
		t.Errorf("Check(bob) on a replica that has not listed yet = %v; want ErrRevoked naming bob and alice", err)
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- vb.Run(runCtx) }()
	go func() { done <- b.Run(runCtx) }()
	defer func() { stop(); <-done; <-done }()
	changed := b.Changed()
	if _, err := a.Revoke(ctx, "carol", "alice"); err != nil {
		t.Fatal(err)
	}
	for err := b.Check(ctx, carol.Cert); !errors.Is(err, ErrRevoked); err = b.Check(ctx, carol.Cert) {
		select {
		case <-changed:
			changed = b.Changed()
		case <-ctx.Done():
			t.Fatalf("Check(carol) after a revocation through another replica = %v; want ErrRevoked", err)
		}
	}

	late := *bob.Cert // issued two seconds after the revocation
	late.NotBefore = bob.Cert.NotBefore.Add(r.At.Sub(pki.IssuedAt(bob.Cert)) + 2*time.Second)
	if err := b.Check(ctx, bobAgent.Cert); err != nil {
		t.Errorf("Check(agent bob's certificate) = %v; want nil: agents are not users", err)
	}
	if err := b.Check(ctx, &late); err != nil {
		t.Errorf("Check(bob's certificate issued after the revocation) = %v; want nil", err)
	}
	all, err := b.All(ctx)
	if err != nil || len(all) != 2 || all[0].Name != "bob" || all[1].Name != "carol" {
		t.Errorf("All = %v, %v; want bob and carol", all, err)
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
