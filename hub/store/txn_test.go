package store

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCommitAllOrNothing: Commit writes every op in one request when every
// condition holds, and nothing when one fails, naming the first key that
// failed and why.
func TestCommitAllOrNothing(t *testing.T) {
	s := open(t, Config{DataDir: t.TempDir()})
	defer s.Close()
	c := ctx(t)
	key := func(i int) string { return fmt.Sprintf("/tether/objects/core/ConfigMap/default/cm-%d", i) }
	rev0, err := s.Create(c, key(0), []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := s.Create(c, key(1), []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}

	before := s.Requests()
	rev, err := s.Commit(c, []Op{UpdateOp(key(0), []byte("v2"), rev0), CheckOp(key(1), kept), CreateOp(key(2), []byte("v1")), CheckOp(key(3), 0)})
	if err != nil {
		t.Fatalf("Commit = %v", err)
	}
	if got := s.Requests().Writes - before.Writes; got != 1 {
		t.Errorf("Commit made %d writes; want 1", got)
	}
	got, err := s.GetAll(c, []string{key(0), key(1), key(2), key(3)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || string(got[key(0)].Value) != "v2" || got[key(0)].Revision != rev || string(got[key(2)].Value) != "v1" || got[key(1)].Revision != kept {
		t.Fatalf("after Commit: %+v; want cm-0 v2 and cm-2 v1 at %d, cm-1 kept at %d, no cm-3", got, rev, kept)
	}

	failing := []struct {
		name string
		bad  Op
		want error
	}{
		{"create of an existing key", CreateOp(key(1), []byte("x")), ErrExists},
		{"update from an old revision", UpdateOp(key(0), []byte("x"), rev0), ErrConflict},
		{"update of an absent key", UpdateOp(key(9), []byte("x"), rev0), ErrNotFound},
		{"check of a moved key", CheckOp(key(0), rev0), ErrConflict},
		{"check that a present key is absent", CheckOp(key(1), 0), ErrConflict},
	}
	for _, f := range failing {
		ops := []Op{CreateOp(key(5), []byte("new")), f.bad, UpdateOp(key(2), []byte("v2"), got[key(2)].Revision)}
		_, err := s.Commit(c, ops)
		var oe *OpError
		if !errors.Is(err, f.want) || !strings.Contains(err.Error(), f.bad.Key) || !errors.As(err, &oe) || oe.Index != 1 {
			t.Errorf("%s: Commit = %v; want %v naming %s, op 1", f.name, err, f.want, f.bad.Key)
		}
		after, err := s.GetAll(c, []string{key(2), key(5)})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := after[key(5)]; ok || string(after[key(2)].Value) != "v1" {
			t.Errorf("%s: the other ops were kept: %+v", f.name, after)
		}
	}
}

// TestChunks: every chunk fits a transaction: at most 127 ops and about
// 1 MiB of values, one larger value alone; order is kept.
func TestChunks(t *testing.T) {
	var ops []Op
	for i := range 300 {
		ops = append(ops, CheckOp(fmt.Sprint(i), 0))
	}
	big := bytes.Repeat([]byte("x"), 600<<10)
	ops = append(ops, CreateOp("a", big), CreateOp("b", big), CreateOp("c", bytes.Repeat([]byte("x"), 3<<20)), CreateOp("d", nil))
	var sizes []string
	n := 0
	for _, ch := range Chunks(ops) {
		b := 0
		for _, o := range ch {
			if o.Key != ops[n].Key {
				t.Fatalf("op %d is %s; want %s", n, o.Key, ops[n].Key)
			}
			n++
			b += len(o.Value)
		}
		sizes = append(sizes, fmt.Sprintf("%d/%dK", len(ch), b>>10))
	}
	if got, want := strings.Join(sizes, " "), "127/0K 127/0K 47/600K 1/600K 1/3072K 1/0K"; got != want || n != len(ops) {
		t.Errorf("chunks (ops/value bytes) = %s over %d ops; want %s over %d", got, n, want, len(ops))
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
