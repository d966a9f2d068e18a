package clientapi

import (
	"context"
	"errors"
	"fmt"
	"sync"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// WatchPlacement streams a template's placement: the current one, then one
// after each change of the template or its binding.
func (p *Placements) WatchPlacement(req *hubv1.WatchPlacementRequest, stream hubv1.PlacementService_WatchPlacementServer) error {
	ctx := stream.Context()
	c, err := p.b.authorize(ctx)
	if err != nil {
		return grpcStatus(err)
	}
	key, err := templateKey(req.GetTemplate())
	if err != nil {
		return grpcStatus(err)
	}
	check := mayRead(key.Kind, key.Namespace, key.Namespace == "")
	if err := check(c); err != nil {
		return grpcStatus(err)
	}
	ctx, _, stop := p.b.follow(ctx, c, check)
	defer stop()
	err = p.b.watchPlacement(ctx, key, req, stream.Send)
	return grpcStatus(refusedCause(ctx, err))
}

// watchPlacement follows the template's key and its binding's key. A
// change of the clusters alone (a new taint, say) sends nothing until the
// binding changes; the rejections are recomputed with each message. Each
// message is the whole placement as it is when sent, so the changes that
// come while the client is busy coalesce into one message
// (placementChanges): a slow client costs the hub no backlog.
func (b *backend) watchPlacement(ctx context.Context, key store.ObjectRef, req *hubv1.WatchPlacementRequest, send func(*hubv1.WatchPlacementResponse) error) error {
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
	ctx, cancel := context.WithCancel(ctx)
	changes := newPlacementChanges()
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		changes.follow(ctx, b.st, key, from+1)
		cancel()
	}()
	defer func() { cancel(); <-followed }()
	for {
		deleted, err := changes.next(ctx)
		if errors.Is(err, store.ErrCompacted) {
			return fmt.Errorf("watch placement from revision %d: that revision was compacted; watch again from 0: %w", from, err)
		}
		if err != nil {
			return err
		}
		if err := b.sendPlacement(ctx, key, req.GetTemplate(), deleted, send); err != nil {
			return err
		}
		if deleted != nil {
			return nil
		}
	}
}

// sendPlacement sends the template's deletion when deleted is set, else
// its current placement.
func (b *backend) sendPlacement(ctx context.Context, key store.ObjectRef, ref *hubv1.ObjectRef, deleted *store.Event,
	send func(*hubv1.WatchPlacementResponse) error) error {
	if deleted != nil {
		pl := &hubv1.Placement{Template: &hubv1.ObjectRef{ApiVersion: ref.GetApiVersion(), Kind: key.Kind, Namespace: key.Namespace, Name: key.Name},
			Revision: deleted.KV.Revision, Message: "the template was deleted"}
		return send(&hubv1.WatchPlacementResponse{Type: hubv1.EventType_EVENT_TYPE_DELETED, Placement: pl})
	}
	pl, err := b.placement(ctx, key, ref)
	if errors.Is(err, ErrNotFound) {
		return nil // deleted meanwhile: its delete event follows
	}
	if err != nil {
		return err
	}
	return send(&hubv1.WatchPlacementResponse{Type: hubv1.EventType_EVENT_TYPE_MODIFIED, Placement: pl})
}

// placementChanges is what a WatchPlacement has read and not yet sent: a
// flag, the template's deletion or the error that ended the watch. One
// goroutine reads the etcd watches as fast as events come (follow), so
// that the etcd client never buffers for a client that does not read.
type placementChanges struct {
	// ready is signalled (capacity 1) after each change and at the end.
	ready chan struct{}

	mu sync.Mutex // guards the fields below
	// changed: the template or binding changed since the last message.
	changed bool
	// deleted is the template's deletion, the watch's last message.
	deleted *store.Event
	// end is the error that ended the etcd watches.
	end error
}

func newPlacementChanges() *placementChanges {
	return &placementChanges{ready: make(chan struct{}, 1)}
}

// follow reads the template's and the binding's keys from revision from
// until the template is deleted, a watch fails or ctx ends.
func (c *placementChanges) follow(ctx context.Context, st *store.Store, key store.ObjectRef, from int64) {
	tkey, bkey := store.ObjectKey(key), store.BindingKey(key)
	templates, bindings := st.Watch(ctx, tkey, from), st.Watch(ctx, bkey, from)
	for {
		var ev store.Event
		var ok bool
		select {
		case ev, ok = <-templates:
		case ev, ok = <-bindings:
		}
		switch {
		case !ok:
			err := ctx.Err()
			if err == nil {
				err = fmt.Errorf("watch placement: ended by the store")
			}
			c.note(nil, err)
			return
		case ev.Err != nil:
			c.note(nil, ev.Err)
			return
		case ev.KV.Key != tkey && ev.KV.Key != bkey: // a prefix watch also sees longer names
		case ev.KV.Key == tkey && ev.Type == store.EventDelete:
			c.note(&ev, nil)
			return
		default:
			c.note(nil, nil)
		}
	}
}

// note records a change, the template's deletion or the end.
func (c *placementChanges) note(deleted *store.Event, end error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case deleted != nil:
		c.deleted = deleted
	case end != nil:
		if c.end == nil {
			c.end = end
		}
	default:
		c.changed = true
	}
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// next waits for a change: the template's deletion, nil for any other
// change, or the error that ended the watch once the changes before it
// are taken.
func (c *placementChanges) next(ctx context.Context) (*store.Event, error) {
	for {
		if deleted, ok, err := c.take(); ok {
			return deleted, err
		}
		select {
		case <-c.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (c *placementChanges) take() (*store.Event, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.deleted != nil:
		return c.deleted, true, nil
	case c.changed:
		c.changed = false
		return nil, true, nil
	default:
		return nil, c.end != nil, c.end
	}
}
