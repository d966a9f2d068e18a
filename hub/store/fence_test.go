package store

import (
	"errors"
	"testing"

	"go.etcd.io/etcd/client/v3/concurrency"
)

// elect makes a session win an election on prefix and returns its key and
// the key's create revision.
func elect(t *testing.T, s *Store, prefix string) (*concurrency.Session, *concurrency.Election) {
	t.Helper()
	sess, err := concurrency.NewSession(s.Client(), concurrency.WithTTL(5), concurrency.WithContext(ctx(t)))
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	e := concurrency.NewElection(sess, prefix)
	if err := e.Campaign(ctx(t), "x"); err != nil {
		t.Fatalf("Campaign: %v", err)
	}
	return sess, e
}

// fencedStore opens a store (closed when t ends) and returns it, a
// released fence, the view it fences, and the key of an object to write.
func fencedStore(t *testing.T) (*Store, *Fence, *Store, string) {
	t.Helper()
	s := open(t, Config{DataDir: t.TempDir()})
	t.Cleanup(func() { s.Close() })
	fence := &Fence{}
	return s, fence, s.Fenced(fence), ObjectKey(ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "nginx"})
}

func TestFencedWrites(t *testing.T) {
	s, fence, view, key := fencedStore(t)
	c := ctx(t)

	if _, err := view.Create(c, key, []byte("v1")); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("Create through a released fence = %v; want ErrNotLeader", err)
	}
	_, e := elect(t, s, Root+"test-leader")
	fence.Hold(e.Key(), e.Rev())
	rev, err := view.Create(c, key, []byte("v1"))
	if err != nil {
		t.Fatalf("Create while leading: %v", err)
	}
	if _, err := view.Update(c, key, []byte("v2"), rev-1); !errors.Is(err, ErrConflict) {
		t.Errorf("stale Update while leading = %v; want ErrConflict", err)
	}
	if _, err := view.Create(c, key, []byte("v1")); !errors.Is(err, ErrExists) {
		t.Errorf("second Create while leading = %v; want ErrExists", err)
	}
	if rev, err = view.Put(c, key, []byte("v2")); err != nil {
		t.Fatalf("Put while leading: %v", err)
	}

	// Deposed: the key is gone and another campaigner holds the next one,
	// but this holder has not noticed (its fence is still held).
	if err := e.Resign(c); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	elect(t, s, Root+"test-leader")
	for name, write := range map[string]func() error{
		"Put":    func() error { _, err := view.Put(c, key, []byte("v3")); return err },
		"Update": func() error { _, err := view.Update(c, key, []byte("v3"), rev); return err },
		"Create": func() error { _, err := view.Create(c, key+"-new", []byte("v3")); return err },
		"Delete": func() error { _, err := view.Delete(c, key, 0); return err },
	} {
		if err := write(); !errors.Is(err, ErrNotLeader) {
			t.Errorf("%s by a deposed leader = %v; want ErrNotLeader", name, err)
		}
	}
	if got, err := s.Get(c, key); err != nil || string(got.Value) != "v2" || got.Revision != rev {
		t.Errorf("Get after the deposed writes = %+v, %v; want v2 at %d", got, err, rev)
	}
	if _, err := s.Put(c, key, []byte("v4")); err != nil {
		t.Errorf("Put through the unfenced store: %v", err)
	}
}

// TestOpenFence: an open fence (the only replica) lets every write through
// with no leadership key at all, and its conditions still decide; released
// again, it refuses them.
func TestOpenFence(t *testing.T) {
	_, fence, view, key := fencedStore(t)
	c := ctx(t)

	fence.Open()
	rev, err := view.Create(c, key, []byte("v1"))
	if err != nil {
		t.Fatalf("Create through an open fence: %v", err)
	}
	if _, err := view.Update(c, key, []byte("v2"), rev-1); !errors.Is(err, ErrConflict) {
		t.Errorf("stale Update through an open fence = %v; want ErrConflict", err)
	}
	if _, err := view.Update(c, key, []byte("v2"), rev); err != nil {
		t.Errorf("Update through an open fence: %v", err)
	}
	fence.Release()
	if _, err := view.Put(c, key, []byte("v3")); !errors.Is(err, ErrNotLeader) {
		t.Errorf("Put through a fence released after Open = %v; want ErrNotLeader", err)
	}
}
