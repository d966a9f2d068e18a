package agentapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/syncstate"
)

// errAgentClosed ends a stream the agent closed (io.EOF): a clean end.
var errAgentClosed = errors.New("agentapi: agent closed the stream")

// received is one Recv result handed from the receiver to Connect.
type received struct {
	msg *agentv1.AgentMessage
	err error
}

// Connect serves one agent's stream (see the package doc).
func (s *Server) Connect(ss agentv1.AgentService_ConnectServer) error {
	cluster, err := clusterOf(ss.Context())
	if err != nil {
		s.log.Warn("agent stream refused", "error", err)
		return grpcStatus(err)
	}
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel() // ends the receiver's wait for ready
	st := newStream(cluster, s.cfg, s.log.With("cluster", cluster))
	st.setCertificate(peerCert(ss.Context()))
	if err := s.track(st); err != nil {
		st.end(err)
		return grpcStatus(st.sendLoop(ctx, ss.Send, nil)) // Goodbye SHUTDOWN
	}
	defer s.untrack(st)
	// Checked once tracked, so that a revocation from now on finds the
	// stream (Recheck) and one before it is seen here.
	if err := s.authorize(ctx, st); err != nil {
		st.log.Warn("agent stream refused", "error", err)
		st.end(err)
		return grpcStatus(st.sendLoop(ctx, ss.Send, nil)) // Goodbye CLUSTER_REMOVED
	}
	if err := s.awaitWorks(ctx, st); err != nil {
		st.end(err)
		return grpcStatus(st.sendLoop(ctx, ss.Send, nil))
	}
	admitted, err := s.admitHello(ctx, st)
	if err != nil {
		st.end(err)
		return grpcStatus(st.sendLoop(ctx, ss.Send, nil))
	}
	defer admitted()
	first := make(chan received, 1)
	s.receivers.Add(1)
	go s.receive(ctx, ss, st, first)

	err = s.serve(ctx, ss, st, first, admitted)
	switch {
	case errors.Is(err, errAgentClosed), errors.Is(err, context.Canceled):
		st.log.Info("agent stream ended", "reason", err)
		return nil
	default:
		st.log.Info("agent stream ended by the hub", "reason", err)
	}
	return grpcStatus(err)
}

// awaitWorks waits until the works can be read (Readiness) before the
// stream reads Hello, the cluster's lease kept valid meanwhile (touching);
// the Hello timeout runs from then. It returns early when the stream ends
// (a revocation) or ctx does.
func (s *Server) awaitWorks(ctx context.Context, st *stream) error {
	r, ok := s.works.(Readiness)
	if !ok {
		return nil
	}
	touch, stop := s.touching(st.cluster)
	defer stop()
	for {
		select {
		case <-r.Ready():
			return nil
		case <-touch:
			s.toucher.Touch(st.cluster) // touch is nil without a toucher
		case <-st.done:
			return st.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// touching touches cluster's lease (Toucher) now and returns a channel
// that ticks every heartbeat interval to touch it again while its stream
// waits, and the func that stops it; a nil channel when Leases cannot
// touch.
func (s *Server) touching(cluster string) (<-chan time.Time, func()) {
	if s.toucher == nil {
		return nil, func() {}
	}
	s.toucher.Touch(cluster)
	t := time.NewTicker(s.cfg.HeartbeatInterval)
	return t.C, t.Stop
}

// helloSlotHold is the longest a stream keeps its place among the Hellos
// in progress (admitHello): an agent that is slow to send its Hello gives
// it up then, and waits for it without holding up the others.
const helloSlotHold = time.Second

// admitHello waits for a place among the streams reading and acting on
// their Hello (Config.MaxHellosInProgress) and returns the func that gives
// it back: called once the stream started (or failed to), or by itself
// after helloSlotHold; calling it again does nothing. The Hellos of a
// fleet reconnecting at once are then decoded a bounded number at a
// time, each dropped once acted on, and the others wait unread in the
// transport, within the stream window, their clusters' leases kept valid
// (touching). It returns early when the stream ends or ctx does.
func (s *Server) admitHello(ctx context.Context, st *stream) (func(), error) {
	touch, stop := s.touching(st.cluster)
	defer stop()
wait:
	for {
		select {
		case s.hellos <- struct{}{}:
			break wait
		case <-touch:
			s.toucher.Touch(st.cluster) // touch is nil without a toucher
		case <-st.done:
			return nil, st.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var once sync.Once
	release := func() { once.Do(func() { <-s.hellos }) }
	timer := time.AfterFunc(helloSlotHold, release)
	return func() { timer.Stop(); release() }, nil
}

// serve runs the stream from Hello to its end and returns why it ended;
// admitted gives back the stream's place among the Hellos in progress.
func (s *Server) serve(ctx context.Context, ss agentv1.AgentService_ConnectServer, st *stream, first <-chan received, admitted func()) error {
	send := ss.Send
	hello, err := s.awaitHello(ctx, st, first)
	if err != nil {
		st.end(err)
		return st.sendLoop(ctx, send, nil) // says Goodbye when err calls for one
	}
	s.observe(ctx, st.cluster, hello)
	s.register(st)
	defer s.unregister(st)
	models, modelsChanged := s.resourceModels(st.cluster)
	rev, custom, err := s.start(ctx, st, hello, models)
	admitted()
	if err != nil {
		st.end(err)
		return st.sendLoop(ctx, send, nil)
	}
	st.log.Info("agent stream started", "agent_version", hello.GetAgentVersion(), "held_works", len(hello.GetHeldWorks()))
	return st.sendLoop(ctx, send, s.follow(ctx, st, rev, models, modelsChanged, custom))
}

// awaitHello returns the stream's first message, which must be Hello.
func (s *Server) awaitHello(ctx context.Context, st *stream, first <-chan received) (*agentv1.Hello, error) {
	timer := time.NewTimer(s.cfg.HelloTimeout)
	defer timer.Stop()
	select {
	case r := <-first:
		if r.err != nil {
			return nil, recvError(st, r.err, s.cfg.MaxMessageBytes)
		}
		if h := r.msg.GetHello(); h != nil {
			return h, nil
		}
		return nil, fmt.Errorf("%w: the first message on a stream must be Hello, got %T", ErrProtocol, r.msg.GetMessage())
	case <-timer.C:
		return nil, fmt.Errorf("%w: no Hello within %s of opening the stream", ErrProtocol, s.cfg.HelloTimeout)
	case <-st.done:
		return nil, st.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start computes the initial difference for hello and queues it after
// Welcome (with the cluster's resource models) and the customizations; it returns the works revision to follow
// from and where to follow the customizations from. Works over the
// cluster's limit are withheld (limit), never a reason to refuse the
// stream: the stream carries the cluster's heartbeats.
func (s *Server) start(ctx context.Context, st *stream, hello *agentv1.Hello, models []*agentv1.ResourceModel) (int64, customState, error) {
	custom := s.customizationsFor(hello)
	storeRev, err := s.catchUp(ctx, st, hello)
	if err != nil {
		return 0, custom, err
	}
	control := []*agentv1.HubMessage{s.welcome(models, storeRev)}
	if custom.msg != nil {
		control = append(control, custom.msg)
	}
	works, rev, err := s.works.Current(ctx, st.cluster)
	if err != nil {
		return 0, custom, fmt.Errorf("%w: read the works of cluster %q: %v", ErrUnavailable, st.cluster, err)
	}
	lim, served := newLimit(s.cfg.MaxWorks, works, heldKeys(hello))
	in := syncstate.Input{HubIdentity: s.cfg.HubIdentity, Hello: hello, Desired: served, Withheld: lim.withheldKeys()}
	// Every work, withheld ones included, counts as wanted: a withheld work
	// the agent holds is not a delete candidate.
	if v, ok := s.works.(interface{ Authoritative(cluster string) bool }); ok && !v.Authoritative(st.cluster) {
		in.NotAuthoritative = true // SyncDone without a key set: the agent deletes nothing for its absence
	}
	if keys := syncstate.DeleteCandidates(s.cfg.HubIdentity, hello, works); len(keys) > 0 {
		if in.Gone, err = s.works.Gone(ctx, st.cluster, keys); err != nil {
			return 0, custom, fmt.Errorf("%w: look up %d works held by cluster %q: %v", ErrUnavailable, len(keys), st.cluster, err)
		}
	}
	if len(hello.GetReportedStatuses()) > 0 {
		if in.Digests, err = s.statuses.Digests(ctx, st.cluster); err != nil {
			return 0, custom, fmt.Errorf("%w: read the status digests of cluster %q: %v", ErrUnavailable, st.cluster, err)
		}
	}
	st.begin(control, syncstate.New(in), lim)
	return rev, custom, nil
}
