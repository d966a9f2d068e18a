package memberproxy

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/agentapi"
	"github.com/tetherproj/tether/internal/tunnelconn"
)

// Errors of Dial.
var (
	// ErrNoAgent: the cluster's agent holds no Listen stream on this hub.
	ErrNoAgent = errors.New("memberproxy: the cluster's agent offers no proxy")
	// ErrOpenTimeout: the agent did not open the tunnel in time.
	ErrOpenTimeout = errors.New("memberproxy: the agent did not open the tunnel in time")
	// ErrBusy: too many tunnel offers wait for this cluster's agent.
	ErrBusy = errors.New("memberproxy: too many tunnels are being opened to the cluster")
)

// maxOffers is how many tunnel offers may wait for one agent to take them
// from its Listen stream; one more is ErrBusy at once.
const maxOffers = 64

// ClusterAuthorizer says whether an agent certificate may still speak for its
// cluster (membership.Registry: not removed, the key bound to the name).
type ClusterAuthorizer interface {
	Authorize(ctx context.Context, cluster string, cert *x509.Certificate) error
}

// Tunnels serves TunnelService to agents and opens tunnels to their
// members for the proxy handler (Dial).
type Tunnels struct {
	agentv1.UnimplementedTunnelServiceServer
	auth        ClusterAuthorizer
	openTimeout time.Duration
	log         hclog.Logger

	mu        sync.Mutex // guards listeners and pending
	listeners map[string]*listener
	pending   map[string]*pending // by tunnel id
}

// listener is one cluster's Listen stream.
type listener struct {
	offers chan []byte
	gone   chan struct{} // closed when a newer Listen replaced it
	mode   string
}

// pending is a tunnel offered and not yet opened.
type pending struct {
	cluster string
	conn    chan *tunnelconn.Conn // buffered: the Tunnel handler never waits
}

// NewTunnels returns the tunnel service; openTimeout bounds how long Dial
// waits for an agent to open a tunnel.
func NewTunnels(auth ClusterAuthorizer, openTimeout time.Duration, logger hclog.Logger) *Tunnels {
	return &Tunnels{auth: auth, openTimeout: openTimeout, log: logger.Named("tunnels"),
		listeners: map[string]*listener{}, pending: map[string]*pending{}}
}

// Listen serves one agent's control stream: the offers of Dial.
func (t *Tunnels) Listen(req *agentv1.ListenRequest, ss agentv1.TunnelService_ListenServer) error {
	cluster, err := t.agentCluster(ss.Context())
	if err != nil {
		return err
	}
	l := &listener{offers: make(chan []byte, maxOffers), gone: make(chan struct{}), mode: req.GetMode()}
	t.swap(cluster, l)
	defer t.drop(cluster, l)
	t.log.Info("agent listens for tunnels", "cluster", cluster, "mode", l.mode, "agent_version", req.GetAgentVersion())
	for {
		select {
		case id := <-l.offers:
			if err := ss.Send(&agentv1.TunnelOffer{TunnelId: id}); err != nil {
				return err
			}
		case <-l.gone:
			return status.Error(codes.Aborted, "a newer Listen stream of this cluster replaced this one")
		case <-ss.Context().Done():
			return nil
		}
	}
}

// agentCluster returns the cluster of the stream's agent certificate,
// refused when the cluster was removed or its key replaced.
func (t *Tunnels) agentCluster(ctx context.Context) (string, error) {
	cluster, err := agentapi.ClusterOf(ctx)
	if err != nil {
		code := codes.Unauthenticated
		if errors.Is(err, agentapi.ErrPermissionDenied) {
			code = codes.PermissionDenied
		}
		return "", status.Error(code, err.Error())
	}
	if err := t.auth.Authorize(ctx, cluster, peerCert(ctx)); err != nil {
		return "", status.Errorf(codes.PermissionDenied, "cluster %q: %v", cluster, err)
	}
	return cluster, nil
}

// peerCert is the verified client certificate of ctx's peer
// (agentapi.ClusterOf has checked there is one).
func peerCert(ctx context.Context) *x509.Certificate {
	p, _ := peer.FromContext(ctx)
	info, _ := p.AuthInfo.(credentials.TLSInfo)
	return info.State.PeerCertificates[0]
}

func (t *Tunnels) swap(cluster string, l *listener) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old := t.listeners[cluster]; old != nil {
		close(old.gone)
	}
	t.listeners[cluster] = l
}

func (t *Tunnels) drop(cluster string, l *listener) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.listeners[cluster] == l {
		delete(t.listeners, cluster)
	}
}

// Listening reports whether cluster's agent holds a Listen stream here,
// and the proxy mode it reported.
func (t *Tunnels) Listening(cluster string) (mode string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.listeners[cluster]
	if l == nil {
		return "", false
	}
	return l.mode, true
}

// Tunnel serves one tunnel: it hands the connection to the Dial that
// offered it and returns once the connection is closed or the agent ends
// the stream.
func (t *Tunnels) Tunnel(ss agentv1.TunnelService_TunnelServer) error {
	cluster, err := agentapi.ClusterOf(ss.Context())
	if err != nil {
		return status.Error(codes.Unauthenticated, err.Error())
	}
	first, err := t.firstFrame(ss)
	if err != nil {
		return err
	}
	p := t.take(first.GetTunnelId(), cluster)
	if p == nil {
		return status.Error(codes.NotFound, "no tunnel of this cluster waits under this id (expired, answered, or another cluster's)")
	}
	ended := make(chan struct{})
	var once sync.Once
	c := tunnelconn.New(ss, func() { once.Do(func() { close(ended) }) }, tunnelconn.Addr("hub"), tunnelconn.Addr(cluster), first.GetData())
	p.conn <- c
	select {
	case <-ended:
	case <-ss.Context().Done():
		c.Close()
	}
	return nil
}

// firstFrame receives a tunnel's first frame, waiting at most the open
// timeout: a stream that names no tunnel holds nothing for longer. The
// receiving goroutine ends with the stream, when the handler returns.
func (t *Tunnels) firstFrame(ss agentv1.TunnelService_TunnelServer) (*agentv1.TunnelFrame, error) {
	type recv struct {
		f   *agentv1.TunnelFrame
		err error
	}
	got := make(chan recv, 1)
	go func() {
		f, err := ss.Recv()
		got <- recv{f, err}
	}()
	timer := time.NewTimer(t.openTimeout)
	defer timer.Stop()
	select {
	case r := <-got:
		return r.f, r.err
	case <-timer.C:
		return nil, status.Errorf(codes.DeadlineExceeded, "no tunnel id within %s", t.openTimeout)
	}
}

// take removes and returns the pending tunnel id of cluster, or nil.
func (t *Tunnels) take(id []byte, cluster string) *pending {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pending[string(id)]
	if p == nil || p.cluster != cluster {
		return nil
	}
	delete(t.pending, string(id))
	return p
}

// Dial opens a tunnel to cluster's agent: it offers one on the agent's
// Listen stream and waits, at most the open timeout, for the agent to
// open it.
func (t *Tunnels) Dial(ctx context.Context, cluster string) (net.Conn, error) {
	id := make([]byte, 16)
	rand.Read(id)
	p := &pending{cluster: cluster, conn: make(chan *tunnelconn.Conn, 1)}
	t.mu.Lock()
	l := t.listeners[cluster]
	if l != nil {
		t.pending[string(id)] = p
	}
	t.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("cluster %q: %w (its agent is not connected, or runs with --member-proxy=off)", cluster, ErrNoAgent)
	}
	select {
	case l.offers <- id:
	default:
		t.take(id, cluster)
		return nil, fmt.Errorf("cluster %q: %w (%d waiting)", cluster, ErrBusy, maxOffers)
	}
	timer := time.NewTimer(t.openTimeout)
	defer timer.Stop()
	select {
	case c := <-p.conn:
		return c, nil
	case <-timer.C:
		return t.abandon(id, cluster, p, fmt.Errorf("cluster %q: %w (%s)", cluster, ErrOpenTimeout, t.openTimeout))
	case <-ctx.Done():
		return t.abandon(id, cluster, p, ctx.Err())
	}
}

// abandon gives up a pending tunnel; one that the agent opened meanwhile
// is closed.
func (t *Tunnels) abandon(id []byte, cluster string, p *pending, err error) (net.Conn, error) {
	if t.take(id, cluster) == nil { // taken: the conn is (or is about to be) in p.conn
		(<-p.conn).Close()
	}
	return nil, err
}
