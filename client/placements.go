package client

import (
	"context"
	"iter"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// WatchPlacements yields the placements of every template sel selects
// (Kind empty for every kind of template). With from 0 it first yields
// the current placement of each (ADDED, revision 0), then one message with
// Synced set and the revision they were read at; then, as with from N,
// one message per change of a selected template or its binding after
// that revision, in the store's order, each carrying the placement as it
// was at the change's revision (Revision). A broken connection is resumed
// after the last message yielded, without missing or repeating a change;
// a stream that breaks before the synced message ends with the error
// instead (start again from 0). It ends when ctx does (yielding ctx's
// error) or with an explained error: OutOfRange when a revision was
// compacted (watch again from 0), ResourceExhausted when the consumer
// took nothing for a minute while the hub's buffer for it was full
// (watch again from the last message's Revision).
func (c *Client) WatchPlacements(ctx context.Context, sel Selector, from int64) iter.Seq2[*hubv1.WatchPlacementsResponse, error] {
	return follow(ctx, c, from, watch[*hubv1.WatchPlacementsResponse]{
		open: func(ctx context.Context, from int64) (stream[*hubv1.WatchPlacementsResponse], error) {
			return c.Placements.WatchPlacements(ctx, &hubv1.WatchPlacementsRequest{ApiVersion: sel.APIVersion, Kind: sel.Kind,
				Namespace: sel.Namespace, LabelSelector: sel.LabelSelector, StartRevision: from})
		},
		revision: func(m *hubv1.WatchPlacementsResponse) int64 { return m.GetRevision() },
		last:     func(*hubv1.WatchPlacementsResponse) bool { return false },
	})
}
