package aggregate

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
	"github.com/tetherproj/tether/internal/runtest"
)

type restartDeps struct{ v *view.View }

// startRestartDeps runs the replica's view of st, which the hub runs
// before the restart as after it; it is on the heap before the
// aggregator is measured.
func startRestartDeps(b *testing.B, ctx context.Context, st *store.Store) restartDeps {
	v, err := view.New(st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		b.Fatal(err)
	}
	runtest.Go(b, ctx, "view", v.Run)
	select {
	case <-v.Synced():
	case <-ctx.Done():
	}
	return restartDeps{v}
}

func restartConfig(d restartDeps) Config {
	return Config{Local: true, FlushInterval: 5 * time.Millisecond, View: d.v}
}
