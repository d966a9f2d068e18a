package clientapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// sendCurrentPlacements sends the placement of every selected template as
// the store holds them at one revision, page by page (placementsPage
// templates and their bindings at a time), then the synced mark, and
// returns that revision: the changes follow from the next one.
func (b *backend) sendCurrentPlacements(ctx context.Context, f *placementsFilter, clusters *clusterView, send func(*hubv1.WatchPlacementsResponse) error) (int64, error) {
	start, end := f.objects, store.PrefixEnd(f.objects)
	var rev int64
	for {
		templates, at, more, err := b.st.ListRange(ctx, start, end, rev, placementsPage)
		if err != nil {
			return 0, currentCompacted(rev, err)
		}
		rev = at
		clusters.observe(rev)
		if err := b.sendPage(ctx, f, clusters.clusters, templates, rev, send); err != nil {
			return 0, err
		}
		if !more || len(templates) == 0 {
			break
		}
		start = templates[len(templates)-1].Key + "\x00"
	}
	return rev, send(&hubv1.WatchPlacementsResponse{Revision: rev, Synced: true})
}

// sendPage sends the placements of one page of templates read at rev,
// with their bindings as they were then.
func (b *backend) sendPage(ctx context.Context, f *placementsFilter, clusters clusterSource, templates []store.KV, rev int64, send func(*hubv1.WatchPlacementsResponse) error) error {
	if len(templates) == 0 {
		return nil
	}
	bindings, err := b.pageBindings(ctx, templates, rev)
	if err != nil {
		return err
	}
	for _, tkv := range templates {
		key, ok := store.ParseObjectKey(tkv.Key)
		if !ok || !f.selects(key) || !matches(tkv.Value, f.sel) {
			continue
		}
		var bkv *store.KV
		if kv, ok := bindings[store.BindingKey(key)]; ok {
			bkv = &kv
		}
		pl, err := b.placementOf(ctx, key, tkv, bkv, clusters)
		if err != nil {
			return err
		}
		if err := send(&hubv1.WatchPlacementsResponse{Type: hubv1.EventType_EVENT_TYPE_ADDED, Placement: pl}); err != nil {
			return err
		}
	}
	return nil
}

// pageBindings reads the bindings of the templates of one page (sorted by
// key) as they were at rev: the bindings' keys sort as their templates'
// do, so they are one range, read a page at a time; it holds one binding
// per template at most, and the rare binding whose template is gone.
func (b *backend) pageBindings(ctx context.Context, templates []store.KV, rev int64) (map[string]store.KV, error) {
	start := store.BindingsPrefix + strings.TrimPrefix(templates[0].Key, store.ObjectsPrefix)
	end := store.BindingsPrefix + strings.TrimPrefix(templates[len(templates)-1].Key, store.ObjectsPrefix) + "\x00"
	out := make(map[string]store.KV, len(templates))
	for {
		kvs, _, more, err := b.st.ListRange(ctx, start, end, rev, placementsPage)
		if err != nil {
			return nil, currentCompacted(rev, err)
		}
		for _, kv := range kvs {
			out[kv.Key] = kv
		}
		if !more || len(kvs) == 0 {
			return out, nil
		}
		start = kvs[len(kvs)-1].Key + "\x00"
	}
}

// currentCompacted explains a compaction that overtook the reading of the
// current placements at rev.
func currentCompacted(rev int64, err error) error {
	if errors.Is(err, store.ErrCompacted) {
		return fmt.Errorf("watch placements: revision %d, at which the current placements were being read, was compacted meanwhile; watch placements again from revision 0: %w", rev, err)
	}
	return err
}
