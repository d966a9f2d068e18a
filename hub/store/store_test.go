package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-hclog"
)

func open(t testing.TB, cfg Config) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, cfg, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	return s
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestCreateUpdateDelete(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	key := ObjectKey(ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "nginx"})

	rev, err := s.Create(c, key, []byte("v1"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := s.Create(c, key, []byte("v1")); !errors.Is(err, ErrExists) {
		t.Errorf("second Create = %v; want ErrExists", err)
	}
	if _, err := s.Update(c, key, []byte("v2"), rev-1); !errors.Is(err, ErrConflict) {
		t.Errorf("Update with stale revision = %v; want ErrConflict", err)
	}
	rev2, err := s.Update(c, key, []byte("v2"), rev)
	if err != nil || rev2 <= rev {
		t.Fatalf("Update = %d, %v; want a revision after %d", rev2, err, rev)
	}
	got, err := s.Get(c, key)
	if err != nil || string(got.Value) != "v2" || got.Revision != rev2 || got.CreateRevision != rev {
		t.Errorf("Get = %+v, %v; want v2 at revision %d created at %d", got, err, rev2, rev)
	}
	if _, err := s.Delete(c, key, rev); !errors.Is(err, ErrConflict) {
		t.Errorf("Delete with stale revision = %v; want ErrConflict", err)
	}
	if _, err := s.Delete(c, key, rev2); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if _, err := s.Get(c, key); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after delete = %v; want ErrNotFound", err)
	}
	if _, err := s.Delete(c, key, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete of missing key = %v; want ErrNotFound", err)
	}
	if _, err := s.Update(c, key, []byte("v3"), rev2); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update of missing key = %v; want ErrNotFound", err)
	}
}

func TestListAndCount(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	for _, name := range []string{"b", "a", "c"} {
		if _, err := s.Put(c, ClusterKey(name), []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(c, TokenKey("t1"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	kvs, rev, err := s.List(c, ClustersPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range kvs {
		keys = append(keys, kv.Key)
	}
	want := []string{ClusterKey("a"), ClusterKey("b"), ClusterKey("c")}
	if diff := cmp.Diff(want, keys); diff != "" || rev == 0 {
		t.Errorf("List(clusters) keys (-want +got):\n%s (revision %d)", diff, rev)
	}
	if n, err := s.Count(c, Root); err != nil || n != 4 {
		t.Errorf("Count(root) = %d, %v; want 4", n, err)
	}
}

func TestWritesSurviveRestartAndIdentityIsStable(t *testing.T) {
	dir := t.TempDir()
	s := open(t, Config{DataDir: dir})
	c := ctx(t)
	id, err := s.Identity(c, "")
	if err != nil || len(id) != 32 {
		t.Fatalf("Identity = %q, %v; want 32 hex digits", id, err)
	}
	if _, err := s.Put(c, ClusterKey("edge-1"), []byte("registered")); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = open(t, Config{DataDir: dir})
	defer s.Close()
	if got, err := s.Get(c, ClusterKey("edge-1")); err != nil || string(got.Value) != "registered" {
		t.Errorf("Get after restart = %q, %v; want registered", got.Value, err)
	}
	if again, err := s.Identity(c, ""); err != nil || again != id {
		t.Errorf("Identity after restart = %q, %v; want %q", again, err, id)
	}

	other := open(t, Config{DataDir: t.TempDir()})
	defer other.Close()
	if fresh, _ := other.Identity(c, ""); fresh == id {
		t.Errorf("a new data dir has identity %q, the same as the old one", fresh)
	}
}

func TestWatchResumesFromRevisionAndReportsCompaction(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	first, _ := s.Put(c, ClusterKey("a"), []byte("1"))
	s.Put(c, ClusterKey("a"), []byte("2"))
	last, _ := s.Delete(c, ClusterKey("a"), 0)

	wctx, cancel := context.WithCancel(c)
	events := s.Watch(wctx, ClustersPrefix, first+1)
	var got []string
	for len(got) < 2 {
		ev := <-events
		if ev.Err != nil {
			t.Fatalf("watch: %v", ev.Err)
		}
		got = append(got, string(ev.KV.Value)+map[EventType]string{EventPut: "+", EventDelete: "-"}[ev.Type])
	}
	cancel()
	if diff := cmp.Diff([]string{"2+", "2-"}, got); diff != "" {
		t.Errorf("events from revision %d (-want +got):\n%s", first+1, diff)
	}

	if err := s.Compact(c, last); err != nil {
		t.Fatal(err)
	}
	ev := <-s.Watch(c, ClustersPrefix, first)
	if !errors.Is(ev.Err, ErrCompacted) {
		t.Errorf("watch from compacted revision %d = %+v; want ErrCompacted", first, ev)
	}
}

// TestListEachPages: ListEach gives every key under the prefix once, in
// order, as of the revision of its first page, across pages: keys written
// and deleted while it lists are not seen, nor keys past the prefix.
func TestListEachPages(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	const n = 3*listPageKeys + 5
	var want []string
	for i := range n {
		key := ClusterKey(fmt.Sprintf("m%04d", i))
		if _, err := s.Put(c, key, []byte(key)); err != nil {
			t.Fatal(err)
		}
		want = append(want, key)
	}
	if _, err := s.Put(c, TokenKey("t1"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	var got []string
	rev, err := s.ListEach(c, ClustersPrefix, func(kv KV) {
		if string(kv.Value) != kv.Key {
			t.Errorf("%s holds %q", kv.Key, kv.Value)
		}
		got = append(got, kv.Key)
		if len(got) == 1 { // while the first page is read: after it, and before it
			if _, err := s.Put(c, ClusterKey("m9999"), []byte("late")); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Delete(c, ClusterKey(fmt.Sprintf("m%04d", n-1)), 0); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListEach(clusters) keys (-want +got):\n%s", diff)
	}
	if kvs, listRev, _ := s.List(c, Root); rev >= listRev || len(kvs) == 0 {
		t.Errorf("ListEach revision %d; want that of its start, before the writes made meanwhile (now %d)", rev, listRev)
	}
}

func TestWatchDeletesWithoutValue(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	first, _ := s.Put(c, ClusterKey("a"), []byte("1"))
	last, _ := s.Delete(c, ClusterKey("a"), 0)

	wctx, cancel := context.WithCancel(c)
	defer cancel()
	events := s.Watch(wctx, ClustersPrefix, first, DeletesWithoutValue)
	var got []Event
	for len(got) < 2 {
		ev := <-events
		if ev.Err != nil {
			t.Fatalf("watch: %v", ev.Err)
		}
		got = append(got, ev)
	}
	want := []Event{
		{Type: EventPut, KV: KV{Key: ClusterKey("a"), Value: []byte("1"), Revision: first, CreateRevision: first}},
		{Type: EventDelete, KV: KV{Key: ClusterKey("a"), Revision: last}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestTooLargeValueIsRefused(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	_, err := s.Put(ctx(t), ClusterKey("huge"), bytes.Repeat([]byte("x"), maxRequestBytes+1))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("Put of %d bytes = %v; want ErrTooLarge", maxRequestBytes+1, err)
	}
}

func TestExternalEndpoints(t *testing.T) {
	embedded := open(t, Config{DataDir: t.TempDir()})
	defer embedded.Close()
	c := ctx(t)
	if _, err := embedded.Put(c, TokenKey("t"), []byte("shared")); err != nil {
		t.Fatal(err)
	}
	external := open(t, Config{Endpoints: embedded.client.Endpoints()})
	defer external.Close()
	if got, err := external.Get(c, TokenKey("t")); err != nil || string(got.Value) != "shared" {
		t.Errorf("Get through external endpoints = %q, %v; want shared", got.Value, err)
	}
}

func TestOpenFailsClearly(t *testing.T) {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := Open(c, Config{}, hclog.NewNullLogger()); err == nil {
		t.Error("Open with neither data dir nor endpoints succeeded; want an error")
	}
	if _, err := Open(c, Config{Endpoints: []string{"127.0.0.1:1"}}, hclog.NewNullLogger()); err == nil {
		t.Error("Open of an unreachable endpoint succeeded; want an error")
	}
}

func TestObjectKeyRoundTrip(t *testing.T) {
	for _, r := range []ObjectRef{
		{Group: "apps", Kind: "Deployment", Namespace: "web", Name: "nginx"},
		{Kind: "ConfigMap", Namespace: "web", Name: "cfg"},
		{Group: "policy.tether.io", Kind: "ClusterPropagationPolicy", Name: "all"},
	} {
		for _, key := range []string{ObjectKey(r), BindingKey(r)} {
			if got, ok := ParseObjectKey(key); !ok || got != r {
				t.Errorf("ParseObjectKey(%q) = %+v, %v; want %+v", key, got, ok, r)
			}
		}
	}
	for _, key := range []string{ClusterKey("x"), ObjectsPrefix + "apps/Deployment/web", BindingsPrefix + "apps/Deployment/web/nginx/x"} {
		if got, ok := ParseObjectKey(key); ok {
			t.Errorf("ParseObjectKey(%q) = %+v; want not an object key", key, got)
		}
	}
}

// TestParseObjectSuffixAllocatesNothing: the hub parses the work key of
// every ack and report.
func TestParseObjectSuffixAllocatesNothing(t *testing.T) {
	key := "apps/Deployment/web/nginx"
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := ParseObjectSuffix(key); !ok {
			t.Fatalf("%q not parsed", key)
		}
	})
	if allocs != 0 {
		t.Errorf("ParseObjectSuffix allocated %.0f times", allocs)
	}
}

// TestIdentityLostIsRefused: a store that holds data but lost its identity
// key gets no new identity (agents would take it for another hub), unless
// the operator gives the old one back; an empty store gets one.
func TestIdentityLostIsRefused(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	id, err := s.Identity(c, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(c, ClusterKey("edge-1"), []byte("registered")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(c, identityKey, 0); err != nil {
		t.Fatal(err)
	}
	got, err := s.Identity(c, "")
	if !errors.Is(err, ErrIdentityLost) || !strings.Contains(err.Error(), ClustersPrefix) {
		t.Fatalf("Identity on a store with a cluster and no identity = %q, %v; want ErrIdentityLost naming %s", got, err, ClustersPrefix)
	}
	if got, err := s.Identity(c, id); err != nil || got != id {
		t.Fatalf("Identity(restore %q) = %q, %v; want it back", id, got, err)
	}
	if got, err := s.Identity(c, "another"); err != nil || got != id {
		t.Errorf("Identity(restore another) with an identity stored = %q, %v; want %q, unchanged", got, err, id)
	}
}
