package agentapi

import (
	"context"
	"fmt"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// following is what a started stream follows besides what it sends: the
// changes of its cluster's works after rev, and the resource models and
// customizations its agent was sent; each with the channel closed when
// it may change (nil: never). The stream's send loop waits on those
// channels with its own (sendLoop) rather than goroutines of their own:
// an idle stream's goroutines are most of what it costs the hub (each
// some 6 KiB of stack; 60 MB for 10,000 agents).
type following struct {
	s             *Server
	rev           int64
	worksChanged  <-chan struct{}
	models        []*agentv1.ResourceModel
	modelsChanged <-chan struct{}
	custom        customState
	customChanged <-chan struct{}
}

// follow starts following the stream from the works revision start
// read, the models Welcome carried and what start sent of the
// customizations, and queues the works' changes since that revision.
func (s *Server) follow(ctx context.Context, st *stream, rev int64, models []*agentv1.ResourceModel, modelsChanged <-chan struct{}, cs customState) *following {
	f := &following{s: s, rev: rev, models: models, modelsChanged: modelsChanged, custom: cs}
	if s.cfg.Customizations != nil {
		set, _ := s.cfg.Customizations.Customizations()
		warnUnsupported(st, cs, set)
		f.customChanged = cs.changed
	}
	f.nextWorks(ctx, st)
	return f
}

// nextWorks queues the changes of the cluster's works since f.rev, less
// those its limit withholds, and takes the channel closed at the next. An
// error ends the stream.
func (f *following) nextWorks(ctx context.Context, st *stream) {
	changes, next, wake, err := f.s.works.Changes(ctx, st.cluster, f.rev)
	f.worksChanged = wake
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		// Removing a cluster revokes it, then deletes its record, which
		// drops its works' history: the stream may get here before
		// Recheck. The revocation is what ended it.
		if aerr := f.s.authorize(ctx, st); aerr != nil {
			st.end(aerr)
			return
		}
		st.end(fmt.Errorf("%w: follow the works of cluster %q from revision %d: %v", ErrUnavailable, st.cluster, f.rev, err))
		return
	}
	if len(changes) > 0 {
		f.rev = next
		st.apply(changes)
	}
}

// pollWorks queues the works' changes if there are any (nextWorks), and
// does not wait: the send loop calls it before each message, so that a
// work queued and changed since is sent in its latest version, once.
func (f *following) pollWorks(ctx context.Context, st *stream) {
	select {
	case <-f.worksChanged:
		f.nextWorks(ctx, st)
	default:
	}
}

// nextModels sends the agent its cluster's new resource models, if they
// changed (Server.nextModels).
func (f *following) nextModels(st *stream) {
	f.models, f.modelsChanged = f.s.nextModels(st, f.models)
}

// nextCustomizations sends the agent a newer customizations set
// (Server.nextCustomizations).
func (f *following) nextCustomizations(st *stream) {
	f.s.nextCustomizations(st, &f.custom)
	f.customChanged = f.custom.changed
}
