package agentapi

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// Server implements agentv1.AgentServiceServer. Register it on the hub's
// gRPC server; call Close before stopping that server.
type Server struct {
	agentv1.UnimplementedAgentServiceServer

	cfg      Config
	works    Works
	statuses Statuses
	leases   Leases
	toucher  Toucher // leases, when it can touch (held-back streams); nil otherwise
	log      hclog.Logger
	// registrations bounds Register per source address and in total.
	registrations *registrationLimits
	// opens bounds how often each cluster opens a stream.
	opens *streamOpenLimits

	receivers sync.WaitGroup // receive goroutines, which outlive Connect briefly
	// hellos holds a token per stream reading and acting on its Hello
	// (admitHello), at most Config.MaxHellosInProgress.
	hellos chan struct{}

	mu      sync.Mutex           // guards the fields below
	streams map[string]*stream   // the live stream of each cluster
	all     map[*stream]struct{} // every Connect in progress, registered or not
	// opened is every Connect in progress of each cluster, oldest first,
	// at most Config.MaxStreamsPerCluster.
	opened  map[string][]*stream
	closing bool
	// suspended, when not nil, is why this replica serves no stream now
	// (Suspend): new streams get Goodbye SHUTDOWN with it.
	suspended error
}

// New returns the service for cfg over its dependencies.
func New(cfg Config, works Works, statuses Statuses, leases Leases, logger hclog.Logger) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	toucher, _ := leases.(Toucher)
	return &Server{
		cfg:           cfg,
		works:         works,
		statuses:      statuses,
		leases:        leases,
		toucher:       toucher,
		log:           logger,
		registrations: newRegistrationLimits(cfg),
		opens:         newStreamOpenLimits(cfg),
		hellos:        make(chan struct{}, cfg.MaxHellosInProgress),
		streams:       make(map[string]*stream),
		all:           make(map[*stream]struct{}),
		opened:        make(map[string][]*stream),
	}, nil
}

// Streams returns the number of live streams.
func (s *Server) Streams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.streams)
}

// Close says Goodbye SHUTDOWN on every stream, refuses new ones, and waits
// until every stream's goroutines have exited or ctx ends.
func (s *Server) Close(ctx context.Context) error {
	s.endAll(func() { s.closing = true }, fmt.Errorf("%w: the hub replica is stopping; reconnect", ErrShutdown))
	done := make(chan struct{})
	go func() { // exits once the last receiver has, even after ctx ends
		s.receivers.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("agentapi: close: %d streams still open: %w", s.Streams(), ctx.Err())
	}
}

// Suspend ends every stream with Goodbye SHUTDOWN saying why, and refuses
// new ones the same way until Resume: for a replica that cannot serve its
// agents (its store is out of reach), so that they reconnect to another
// replica. Agents keep everything they hold; a Goodbye deletes nothing.
func (s *Server) Suspend(why string) {
	err := fmt.Errorf("%w: %s; reconnect to another hub replica", ErrShutdown, why)
	s.endAll(func() { s.suspended = err }, err)
}

// endAll runs mark under the lock (so that no stream starts after it
// unseen) and ends every stream in progress with err.
func (s *Server) endAll(mark func(), err error) {
	s.mu.Lock()
	mark()
	live := make([]*stream, 0, len(s.all))
	for st := range s.all {
		live = append(live, st)
	}
	s.mu.Unlock()
	for _, st := range live {
		st.end(err)
	}
}

// Resume serves new streams again after Suspend.
func (s *Server) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.suspended = nil
}

// Pending returns the number of Connect calls in progress, with or
// without Hello.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.all)
}

// track records a starting Connect, so that Close and Suspend can end it;
// it refuses when the server is closing or suspended, or when its cluster
// opens streams too often (streamOpenLimits, counted as KindStreamOpenLimit). Past
// Config.MaxStreamsPerCluster streams of its cluster, the oldest ends
// (superseded): the newest is served, as with one stream per cluster.
func (s *Server) track(st *stream) error {
	if err := s.opens.allow(st.cluster, time.Now()); err != nil {
		s.cfg.Counts.Add("agentapi", KindStreamOpenLimit)
		return err
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return fmt.Errorf("%w: the hub replica is stopping; reconnect", ErrShutdown)
	}
	if s.suspended != nil {
		s.mu.Unlock()
		return s.suspended
	}
	s.all[st] = struct{}{}
	opened := append(s.opened[st.cluster], st)
	var oldest *stream
	if len(opened) > s.cfg.MaxStreamsPerCluster {
		oldest, opened = opened[0], opened[1:]
	}
	s.opened[st.cluster] = opened
	s.mu.Unlock()
	if oldest != nil {
		oldest.end(fmt.Errorf("%w: cluster %q opened more than %d streams at once; the oldest ends", ErrSuperseded, st.cluster, s.cfg.MaxStreamsPerCluster))
	}
	return nil
}

func (s *Server) untrack(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.all, st)
	opened := slices.DeleteFunc(s.opened[st.cluster], func(o *stream) bool { return o == st })
	if len(opened) == 0 {
		delete(s.opened, st.cluster)
		return
	}
	s.opened[st.cluster] = opened
}

// register makes st the live stream of its cluster and ends the one it
// supersedes.
func (s *Server) register(st *stream) {
	s.mu.Lock()
	old := s.streams[st.cluster]
	s.streams[st.cluster] = st
	s.mu.Unlock()
	if old != nil {
		old.end(fmt.Errorf("%w: a newer stream of cluster %q took over", ErrSuperseded, st.cluster))
	}
}

// unregister forgets st unless a newer stream replaced it.
func (s *Server) unregister(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams[st.cluster] == st {
		delete(s.streams, st.cluster)
	}
}
