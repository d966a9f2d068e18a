package clientapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/tetherproj/tether/api/codec"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// placementsPage is how many templates WatchPlacements reads from the
// store at once for the current placements it sends first: what one
// stream holds in memory at most before the client takes it.
const placementsPage = 500

// WatchPlacements streams the placements of every selected template.
func (p *Placements) WatchPlacements(req *hubv1.WatchPlacementsRequest, stream hubv1.PlacementService_WatchPlacementsServer) error {
	ctx := stream.Context()
	c, err := p.b.authorize(ctx)
	if err != nil {
		return grpcStatus(err)
	}
	check := mayRead(cmp.Or(req.GetKind(), objectsKind), req.GetNamespace(), false)
	if err := check(c); err != nil {
		return grpcStatus(err)
	}
	ctx, current, stop := p.b.follow(ctx, c, check)
	defer stop()
	may := func(key store.ObjectRef) bool { return current().reads(key.Kind, key.Namespace) }
	err = p.b.watchPlacements(ctx, req, may, stream.Send)
	return grpcStatus(refusedCause(ctx, err))
}

// placementsFilter selects the templates of a WatchPlacements and their
// bindings.
type placementsFilter struct {
	// objects is the key prefix of the selected kind's templates (or of
	// every object); bindings the same under the bindings' prefix.
	objects, bindings string
	namespace         string // "" for all
	sel               labels.Selector
	// may reports whether the caller may read a template now.
	may func(store.ObjectRef) bool
}

func newPlacementsFilter(req *hubv1.WatchPlacementsRequest, may func(store.ObjectRef) bool) (*placementsFilter, error) {
	wf, err := newWatchFilter(&hubv1.WatchRequest{ApiVersion: req.GetApiVersion(), Kind: req.GetKind(),
		Namespace: req.GetNamespace(), LabelSelector: req.GetLabelSelector()})
	if err != nil {
		return nil, err
	}
	if req.GetKind() != "" {
		if kr, _ := resolveKind(req.GetApiVersion(), req.GetKind()); kr.own {
			return nil, fmt.Errorf("%w: %s is not a resource template; only templates have a placement", ErrInvalid, req.GetKind())
		}
	}
	return &placementsFilter{objects: wf.prefix, bindings: store.BindingsPrefix + strings.TrimPrefix(wf.prefix, store.ObjectsPrefix),
		namespace: wf.namespace, sel: wf.sel, may: may}, nil
}

// selects reports whether key names a selected template (its labels
// aside) that the caller may read.
func (f *placementsFilter) selects(key store.ObjectRef) bool {
	return (f.namespace == "" || key.Namespace == f.namespace) && !ownGroup(key.Group) && f.may(key)
}

// ownGroup reports whether group is one of Tether's, whose objects are
// not resource templates.
func ownGroup(group string) bool {
	for _, info := range codec.Kinds() {
		if info.GVK.Group == group {
			return true
		}
	}
	return false
}

// source watches the selected templates and their bindings as one etcd
// watch over the key range from the bindings' prefix to the end of the
// templates' (bindings/ sorts before objects/), so that their events come
// in one revision order; the keys in between (clusters, liveness, meta)
// are read and dropped by keeps.
func (f *placementsFilter) source(st *store.Store) watchSource {
	end := store.PrefixEnd(f.objects)
	return watchSource{
		open: func(ctx context.Context, from int64) <-chan store.Event {
			return st.WatchRange(ctx, f.bindings, end, from)
		},
		again: "watch placements again from revision 0",
	}
}

// keeps reports whether ev may concern a selected template: a change of
// one of them or of a binding under the selected prefix. Labels are
// checked when the event is sent, on the template as it was then.
func (f *placementsFilter) keeps(ev store.Event) bool {
	if !strings.HasPrefix(ev.KV.Key, f.objects) && !strings.HasPrefix(ev.KV.Key, f.bindings) {
		return false
	}
	key, ok := store.ParseObjectKey(ev.KV.Key)
	return ok && f.selects(key)
}

// watchPlacements sends the current placements when start_revision is 0,
// then every change after it. Changes wait for the client in a lagQueue,
// as Watch's do (bounded; a stalled client is cut), and each is turned
// into a placement only when sent, with the clusters of the backend's
// clusterCache (clusterView).
func (b *backend) watchPlacements(ctx context.Context, req *hubv1.WatchPlacementsRequest, may func(store.ObjectRef) bool, send func(*hubv1.WatchPlacementsResponse) error) error {
	f, err := newPlacementsFilter(req, may)
	if err != nil {
		return err
	}
	from := req.GetStartRevision()
	if from < 0 {
		return fmt.Errorf("%w: start_revision %d: a revision is 0 (from now) or positive", ErrInvalid, from)
	}
	clusters := b.newClusterView(from)
	if from == 0 {
		if from, err = b.sendCurrentPlacements(ctx, f, clusters, send); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	q := newLagQueue(b.cfg.WatchBufferEvents, b.cfg.WatchBufferBytes, b.cfg.WatchStall)
	filled := make(chan struct{})
	go func() {
		defer close(filled)
		fillWatch(ctx, q, f.source(b.st), from+1, clusters.noting(f.keeps), b.cfg.OnWatchCut)
	}()
	defer func() { cancel(); <-filled }()
	for {
		ev, err := q.next(ctx)
		if err != nil {
			return err
		}
		resp, err := b.placementChange(ctx, f, clusters.clusters, ev)
		if err != nil {
			return err
		}
		if resp == nil {
			continue
		}
		if err := send(resp); err != nil {
			return err
		}
	}
}

// placementChange is the message of one change of a template or binding
// at revision R: the template's placement as it was at R, or nil when the
// change concerns no selected template (a binding whose template is gone
// or does not match the label selector).
func (b *backend) placementChange(ctx context.Context, f *placementsFilter, clusters clusterSource, ev store.Event) (*hubv1.WatchPlacementsResponse, error) {
	key, _ := store.ParseObjectKey(ev.KV.Key)
	if !f.selects(key) { // the caller's grant changed since it was read
		return nil, nil
	}
	rev := ev.KV.Revision
	var tkv store.KV
	var bkv *store.KV
	t := hubv1.EventType_EVENT_TYPE_MODIFIED
	if strings.HasPrefix(ev.KV.Key, store.ObjectsPrefix) {
		if !matches(ev.KV.Value, f.sel) {
			return nil, nil
		}
		if ev.Type == store.EventDelete {
			pl := &hubv1.Placement{Template: templateRef(key, ev.KV.Value), Revision: rev, Message: "the template was deleted"}
			return &hubv1.WatchPlacementsResponse{Type: hubv1.EventType_EVENT_TYPE_DELETED, Placement: pl, Revision: rev}, nil
		}
		if ev.KV.CreateRevision == rev {
			t = hubv1.EventType_EVENT_TYPE_ADDED
		}
		tkv = ev.KV
		var err error
		if bkv, err = b.getAt(ctx, store.BindingKey(key), rev); err != nil {
			return nil, err
		}
	} else {
		tk, err := b.getAt(ctx, store.ObjectKey(key), rev)
		if err != nil || tk == nil || !matches(tk.Value, f.sel) {
			return nil, err
		}
		tkv = *tk
		if ev.Type == store.EventPut {
			bkv = &ev.KV
		}
	}
	pl, err := b.placementOf(ctx, key, tkv, bkv, clusters)
	if err != nil {
		return nil, err
	}
	pl.Revision = rev
	return &hubv1.WatchPlacementsResponse{Type: t, Placement: pl, Revision: rev}, nil
}

// getAt reads key as it was at revision rev; nil when it did not exist.
func (b *backend) getAt(ctx context.Context, key string, rev int64) (*store.KV, error) {
	kv, err := b.st.GetAt(ctx, key, rev)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case errors.Is(err, store.ErrCompacted):
		return nil, fmt.Errorf("watch placements: the client read too slowly: revision %d, which it had not read yet, was compacted meanwhile; watch placements again from revision 0: %w", rev, err)
	case err != nil:
		return nil, err
	}
	return &kv, nil
}
