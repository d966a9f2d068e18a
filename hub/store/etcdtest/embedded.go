package etcdtest

import (
	"context"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/store"
)

// Embedded opens a store on an embedded single-member etcd in a temporary
// directory (the hub's default), closed when the test ends.
func Embedded(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
