package store

import (
	"fmt"
	"testing"
)

// TestLocalReadAndUnchanged: GetLocalAll reads without a quorum round what
// Get reads; Unchanged checks many keys' revisions, absent ones too, in
// one quorum round per 128 keys, and fails once any of them moved.
func TestLocalReadAndUnchanged(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	revs := map[string]int64{}
	for i := range maxTxnOps + 2 {
		key := fmt.Sprintf("/tether/objects/core/ConfigMap/default/cm-%03d", i)
		rev, err := s.Create(c, key, []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		revs[key] = rev
	}
	absent := "/tether/objects/core/ConfigMap/default/absent"
	revs[absent] = 0
	key := "/tether/objects/core/ConfigMap/default/cm-000"

	before := s.Requests()
	got, err := s.GetLocalAll(c, []string{key})
	if kv := got[key]; err != nil || string(kv.Value) != "v1" || kv.Revision != revs[key] {
		t.Errorf("GetLocalAll = %+v, %v; want v1 at revision %d", kv, err, revs[key])
	}
	if got, err := s.GetLocalAll(c, []string{absent}); len(got) != 0 || err != nil {
		t.Errorf("GetLocalAll(absent) = %v, %v; want nothing", got, err)
	}
	ok, err := s.Unchanged(c, revs)
	after := s.Requests()
	if !ok || err != nil {
		t.Errorf("Unchanged = %v, %v; want true", ok, err)
	}
	if got, want := (Requests{after.QuorumReads - before.QuorumReads, after.LocalReads - before.LocalReads, after.Writes - before.Writes}), (Requests{QuorumReads: 2, LocalReads: 2}); got != want {
		t.Errorf("requests = %+v; want %+v", got, want)
	}
	if _, err := s.Update(c, key, []byte("v2"), revs[key]); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Unchanged(c, revs); ok || err != nil {
		t.Errorf("Unchanged after an update = %v, %v; want false", ok, err)
	}
	got, _ = s.GetLocalAll(c, []string{key})
	revs[key] = got[key].Revision
	if _, err := s.Create(c, absent, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Unchanged(c, revs); ok || err != nil {
		t.Errorf("Unchanged after a create = %v, %v; want false", ok, err)
	}
}

// TestGetAll: GetLocalAll and GetAll read many keys, absent ones left
// out, in one request per 128 keys.
func TestGetAll(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	var keys []string
	for i := range 130 {
		k := fmt.Sprintf("/tether/objects/core/ConfigMap/default/cm-%03d", i)
		keys = append(keys, k)
		if i%2 == 0 {
			if _, err := s.Create(c, k, []byte(k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := s.Requests()
	local, err := s.GetLocalAll(c, keys)
	if err != nil {
		t.Fatal(err)
	}
	quorum, err := s.GetAll(c, keys)
	if err != nil {
		t.Fatal(err)
	}
	after := s.Requests()
	if got := (Requests{after.QuorumReads - before.QuorumReads, after.LocalReads - before.LocalReads, 0}); got != (Requests{QuorumReads: 2, LocalReads: 2}) {
		t.Errorf("requests = %+v; want 2 quorum and 2 local reads", got)
	}
	for _, got := range []map[string]KV{local, quorum} {
		if len(got) != 65 {
			t.Errorf("read %d keys; want 65", len(got))
		}
		for k, kv := range got {
			if string(kv.Value) != k || kv.Key != k || kv.Revision == 0 {
				t.Errorf("%s = %+v", k, kv)
			}
		}
	}
}
