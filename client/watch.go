package client

import (
	"context"
	"iter"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// Watch yields every change of the selected objects after revision from
// (typically a List's revision; 0 for changes from now on), in the order
// of the store, each event's object carrying the change's revision. A
// broken connection is resumed after the last event yielded, without
// missing or repeating one (from 0, only once an event came). It ends
// when ctx does (yielding ctx's error) or with an explained error: a
// revision older than the hub's compaction is OutOfRange: List again and
// watch from the list's revision.
//
// A label selector filters on each event's new labels, so an object
// leaving the selection sends nothing; watch without one to see it go.
func (c *Client) Watch(ctx context.Context, sel Selector, from int64) iter.Seq2[*hubv1.WatchResponse, error] {
	return follow(ctx, c, from, watch[*hubv1.WatchResponse]{
		open: func(ctx context.Context, from int64) (stream[*hubv1.WatchResponse], error) {
			return c.Objects.Watch(ctx, &hubv1.WatchRequest{ApiVersion: sel.APIVersion, Kind: sel.Kind,
				Namespace: sel.Namespace, LabelSelector: sel.LabelSelector, StartRevision: from})
		},
		revision: func(ev *hubv1.WatchResponse) int64 { return ev.GetObject().GetRevision() },
		last:     func(*hubv1.WatchResponse) bool { return false },
	})
}
