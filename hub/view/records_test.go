package view_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/store/etcdtest"
	"github.com/tetherproj/tether/hub/view"
)

// TestRecordsFollowPrefix: a Records holds nothing and is not loaded
// before its first batch; then it holds every record listed, follows
// puts and deletes (closing Changed), and holds the owner's unreadable
// value for bytes that do not decode.
func TestRecordsFollowPrefix(t *testing.T) {
	st := etcdtest.Embedded(t)
	prefix := store.Root + "records-test/"
	decode := func(key string, value []byte) (any, error) {
		var n int
		if err := json.Unmarshal(value, &n); err != nil {
			return nil, err
		}
		return n, nil
	}
	put(t, st, prefix+"a", []byte("1"))
	v, err := view.New(st, []view.Prefix{{Prefix: prefix, Decode: decode}}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	recs := view.NewRecords(v, prefix, func(string, error) int { return -1 }, hclog.NewNullLogger())
	if _, _, loaded := recs.Get("a"); loaded {
		t.Fatal("loaded before Run; want not")
	}
	changed := recs.Changed()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- v.Run(ctx) }()
	go func() { done <- recs.Run(ctx) }()
	defer func() { cancel(); <-done; <-done }()

	waitRecord := func(name string, want int, wantOK bool) {
		t.Helper()
		deadline := time.After(waitTimeout)
		for {
			got, ok, loaded := recs.Get(name)
			if loaded && ok == wantOK && got == want {
				return
			}
			select {
			case <-changed:
				changed = recs.Changed()
			case <-deadline:
				t.Fatalf("Get(%s) = %d, %v, loaded %v; want %d, %v", name, got, ok, loaded, want, wantOK)
			}
		}
	}
	waitRecord("a", 1, true)
	put(t, st, prefix+"b", []byte("2"))
	waitRecord("b", 2, true)
	put(t, st, prefix+"b", []byte("{not a number"))
	waitRecord("b", -1, true)
	if _, err := st.Delete(context.Background(), prefix+"a", 0); err != nil {
		t.Fatal(err)
	}
	waitRecord("a", 0, false)
	recs.Set("c", 3)
	if got, ok, _ := recs.Get("c"); !ok || got != 3 {
		t.Errorf("Get(c) after Set = %d, %v; want 3 at once", got, ok)
	}
}
