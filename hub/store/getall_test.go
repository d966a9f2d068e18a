package store

import (
	"fmt"
	"testing"
)

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
