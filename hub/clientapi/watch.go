package clientapi

import (
	"cmp"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// Watch streams the changes of the selected objects after a revision.
func (o *Objects) Watch(req *hubv1.WatchRequest, stream hubv1.ObjectService_WatchServer) error {
	c, err := o.b.authorize(stream.Context())
	if err != nil {
		return grpcStatus(err)
	}
	return grpcStatus(o.b.watch(stream.Context(), req, c, stream.Send))
}

// watchFilter selects the events of a Watch.
type watchFilter struct {
	prefix    string
	namespace string // "" for all
	sel       labels.Selector
	// kind is the kind asked for ("" for all), and clusterScoped whether
	// it is cluster-scoped.
	kind          string
	clusterScoped bool
}

func newWatchFilter(req *hubv1.WatchRequest) (*watchFilter, error) {
	sel, err := labels.Parse(req.GetLabelSelector())
	if err != nil {
		return nil, fmt.Errorf("%w: label selector %q: %v", ErrInvalid, req.GetLabelSelector(), err)
	}
	f := &watchFilter{prefix: store.ObjectsPrefix, namespace: req.GetNamespace(), sel: sel}
	if req.GetKind() != "" {
		kr, err := resolveKind(req.GetApiVersion(), req.GetKind())
		if err != nil {
			return nil, err
		}
		ns := f.namespace
		if kr.scope == scopeCluster {
			ns, f.namespace = "", ""
		}
		f.kind, f.clusterScoped = kr.kind, kr.scope == scopeCluster
		f.prefix = store.KindPrefix(store.ObjectsPrefix, kr.group, kr.kind, ns)
	}
	return f, nil
}

// watch sends every change under the filter's prefix after
// start_revision (from now when 0) until ctx ends. Label selectors are
// applied to each event's object: an object whose labels stop matching
// produces no event (the stored history does not say whether it matched
// before), so watch without a selector to see objects leave a selection.
// Events wait for the client in a lagQueue, which bounds what a slow
// client costs the hub. Events of objects the caller may not read are not
// sent, decided with the caller's grant as it is when they are read and
// again when they are sent; a grant that no longer allows what the
// request asked for ends the watch (follow).
func (b *backend) watch(ctx context.Context, req *hubv1.WatchRequest, c caller, send func(*hubv1.WatchResponse) error) error {
	f, err := newWatchFilter(req)
	if err != nil {
		return err
	}
	check := mayRead(cmp.Or(f.kind, objectsKind), f.namespace, f.clusterScoped)
	if err := check(c); err != nil {
		return err
	}
	ctx, current, stop := b.follow(ctx, c, check)
	defer stop()
	err = b.watchEvents(ctx, req, f, current, send)
	return refusedCause(ctx, err)
}

// watchEvents is watch's loop, from its start revision.
func (b *backend) watchEvents(ctx context.Context, req *hubv1.WatchRequest, f *watchFilter, current func() caller, send func(*hubv1.WatchResponse) error) error {
	readable := func(ev store.Event) bool {
		key, ok := store.ParseObjectKey(ev.KV.Key)
		return ok && current().reads(key.Kind, key.Namespace)
	}
	keeps := func(ev store.Event) bool { return f.keeps(ev) && readable(ev) }
	from := req.GetStartRevision()
	if from < 0 {
		return fmt.Errorf("%w: start_revision %d: a revision is 0 (from now) or positive", ErrInvalid, from)
	}
	if from > 0 {
		from++
	}
	ctx, cancel := context.WithCancel(ctx)
	q := newLagQueue(b.cfg.WatchBufferEvents, b.cfg.WatchBufferBytes, b.cfg.WatchStall)
	filled := make(chan struct{})
	go func() {
		defer close(filled)
		fillWatch(ctx, q, prefixSource(b.st, f.prefix), from, keeps, b.cfg.OnWatchCut)
	}()
	defer func() { cancel(); <-filled }()
	for {
		ev, err := q.next(ctx)
		if err != nil {
			return err
		}
		if !readable(ev) {
			continue
		}
		resp, err := b.watchEvent(ctx, ev, current().view())
		if err != nil {
			return err
		}
		if err := send(resp); err != nil {
			return err
		}
	}
}

// keeps reports whether the filter selects ev.
func (f *watchFilter) keeps(ev store.Event) bool {
	key, ok := store.ParseObjectKey(ev.KV.Key)
	return ok && (f.namespace == "" || key.Namespace == f.namespace) && matches(ev.KV.Value, f.sel)
}

// watchEvent converts a store event the filter kept.
func (b *backend) watchEvent(ctx context.Context, ev store.Event, v view) (*hubv1.WatchResponse, error) {
	key, _ := store.ParseObjectKey(ev.KV.Key)
	t := hubv1.EventType_EVENT_TYPE_MODIFIED
	switch {
	case ev.Type == store.EventDelete:
		t = hubv1.EventType_EVENT_TYPE_DELETED
	case ev.KV.CreateRevision == ev.KV.Revision:
		t = hubv1.EventType_EVENT_TYPE_ADDED
	}
	obj, err := b.objectOf(ctx, key, ev.KV, statusOf{}, v)
	if err != nil {
		return nil, err
	}
	return &hubv1.WatchResponse{Type: t, Object: obj}, nil
}
