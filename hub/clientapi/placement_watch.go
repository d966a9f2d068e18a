package clientapi

import (
	"context"
	"errors"
	"fmt"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// WatchPlacement streams a template's placement: the current one, then one
// after each change of the template or its binding.
func (p *Placements) WatchPlacement(req *hubv1.WatchPlacementRequest, stream hubv1.PlacementService_WatchPlacementServer) error {
	ctx := stream.Context()
	if _, err := authorize(ctx, read); err != nil {
		return grpcStatus(err)
	}
	key, err := templateKey(req.GetTemplate())
	if err != nil {
		return grpcStatus(err)
	}
	return grpcStatus(p.b.watchPlacement(ctx, key, req, stream.Send))
}

// watchPlacement follows the template's key and its binding's key. A
// change of the clusters alone (a new taint, say) sends nothing until the
// binding changes; the rejections are recomputed with each message.
func (b *backend) watchPlacement(ctx context.Context, key store.ObjectRef, req *hubv1.WatchPlacementRequest, send func(*hubv1.WatchPlacementResponse) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	from := req.GetStartRevision()
	if from < 0 {
		return fmt.Errorf("%w: start_revision %d: a revision is 0 (from now) or positive", ErrInvalid, from)
	}
	if from == 0 {
		pl, err := b.placement(ctx, key, req.GetTemplate())
		if err != nil {
			return err
		}
		if err := send(&hubv1.WatchPlacementResponse{Type: hubv1.EventType_EVENT_TYPE_ADDED, Placement: pl}); err != nil {
			return err
		}
		from = pl.Revision
	}
	tkey, bkey := store.ObjectKey(key), store.BindingKey(key)
	templates, bindings := b.st.Watch(ctx, tkey, from+1), b.st.Watch(ctx, bkey, from+1)
	for {
		var ev store.Event
		var ok bool
		select {
		case ev, ok = <-templates:
		case ev, ok = <-bindings:
		}
		if !ok {
			return ctx.Err()
		}
		if ev.Err != nil {
			if errors.Is(ev.Err, store.ErrCompacted) {
				return fmt.Errorf("watch placement from revision %d: that revision was compacted; watch again from 0: %w", from, ev.Err)
			}
			return ev.Err
		}
		if ev.KV.Key != tkey && ev.KV.Key != bkey { // a prefix watch also sees longer names
			continue
		}
		done, err := b.sendPlacement(ctx, key, req.GetTemplate(), ev, ev.KV.Key == tkey, send)
		if err != nil || done {
			return err
		}
	}
}

// sendPlacement sends the placement after ev; done once the template is gone.
func (b *backend) sendPlacement(ctx context.Context, key store.ObjectRef, ref *hubv1.ObjectRef, ev store.Event, template bool,
	send func(*hubv1.WatchPlacementResponse) error) (bool, error) {
	if template && ev.Type == store.EventDelete {
		pl := &hubv1.Placement{Template: &hubv1.ObjectRef{ApiVersion: ref.GetApiVersion(), Kind: key.Kind, Namespace: key.Namespace, Name: key.Name},
			Revision: ev.KV.Revision, Message: "the template was deleted"}
		return true, send(&hubv1.WatchPlacementResponse{Type: hubv1.EventType_EVENT_TYPE_DELETED, Placement: pl})
	}
	pl, err := b.placement(ctx, key, ref)
	if errors.Is(err, ErrNotFound) {
		return false, nil // deleted meanwhile: its delete event follows
	}
	if err != nil {
		return false, err
	}
	return false, send(&hubv1.WatchPlacementResponse{Type: hubv1.EventType_EVENT_TYPE_MODIFIED, Placement: pl})
}
