package memberproxy

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/tetherproj/tether/internal/memberreq"
)

// Limits bound the proxy per user and per cluster. Zero fields take the
// defaults below.
type Limits struct {
	// SessionsPerUser and SessionsPerCluster bound the requests in flight
	// (an exec, a log follow, a watch: each is one until it ends); one
	// more is refused with 429.
	SessionsPerUser, SessionsPerCluster int
	// BytesPerSecondPerUser and BytesPerSecondPerCluster bound the bytes
	// all of a user's (a cluster's) sessions carry per second, both
	// directions together; 0 is no bound.
	BytesPerSecondPerUser, BytesPerSecondPerCluster int
	// IdleTimeout ends a session that carried no byte for this long.
	IdleTimeout time.Duration
	// OpenTimeout bounds the wait for an agent to open a tunnel.
	OpenTimeout time.Duration
	// RecheckInterval is how often an open session's user is authorized
	// again (a revoked user, or a role that no longer allows the session,
	// ends it).
	RecheckInterval time.Duration
}

// Defaults of Limits.
const (
	DefaultSessionsPerUser = 32
	// DefaultSessionsPerCluster is memberreq's, which the agent applies too.
	DefaultSessionsPerCluster = memberreq.SessionsPerCluster
	// DefaultIdleTimeout is longer than kube-apiserver's longest watch
	// (its --min-request-timeout, 30 min, randomized up to twice), so that
	// only sessions nobody uses end by it.
	DefaultIdleTimeout = time.Hour
	DefaultOpenTimeout = 10 * time.Second
	// DefaultRecheckInterval: a session ends at most this long after its
	// user lost the right to it.
	DefaultRecheckInterval = 2 * time.Second
)

// WithDefaults returns l with its zero fields set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.SessionsPerUser == 0 {
		l.SessionsPerUser = DefaultSessionsPerUser
	}
	if l.SessionsPerCluster == 0 {
		l.SessionsPerCluster = DefaultSessionsPerCluster
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.OpenTimeout == 0 {
		l.OpenTimeout = DefaultOpenTimeout
	}
	if l.RecheckInterval == 0 {
		l.RecheckInterval = DefaultRecheckInterval
	}
	return l
}

// rateChunk is the most bytes one read or write takes from a rate bucket
// at once: it is also the buckets' burst.
const rateChunk = 32 << 10

// bucket is one user's or cluster's sessions and byte rate.
type bucket struct {
	sessions int
	rate     *rate.Limiter // nil: no bound
}

// gate counts sessions per user and per cluster.
type gate struct {
	limits Limits
	mu     sync.Mutex // guards users and clusters
	users  map[string]*bucket
	clus   map[string]*bucket
}

func newGate(l Limits) *gate {
	return &gate{limits: l, users: map[string]*bucket{}, clus: map[string]*bucket{}}
}

// acquire admits one session of user on cluster, or says which bound it
// reached; release ends it.
func (g *gate) acquire(user, cluster string) (s *session, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	u := g.bucket(g.users, user, g.limits.BytesPerSecondPerUser)
	c := g.bucket(g.clus, cluster, g.limits.BytesPerSecondPerCluster)
	switch {
	case u.sessions >= g.limits.SessionsPerUser:
		err = fmt.Errorf("user %q has %d proxy sessions open, the most allowed", user, u.sessions)
	case c.sessions >= g.limits.SessionsPerCluster:
		err = fmt.Errorf("cluster %q has %d proxy sessions open, the most allowed", cluster, c.sessions)
	}
	if err != nil {
		g.prune(user, cluster)
		return nil, err
	}
	u.sessions++
	c.sessions++
	return &session{user: user, cluster: cluster, gate: g, rates: nonNil(u.rate, c.rate), idle: g.limits.IdleTimeout}, nil
}

func (g *gate) bucket(m map[string]*bucket, key string, perSecond int) *bucket {
	b := m[key]
	if b == nil {
		b = &bucket{}
		if perSecond > 0 {
			b.rate = rate.NewLimiter(rate.Limit(perSecond), max(perSecond, rateChunk))
		}
		m[key] = b
	}
	return b
}

// release ends one session of user on cluster.
func (g *gate) release(user, cluster string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.users[user].sessions--
	g.clus[cluster].sessions--
	g.prune(user, cluster)
}

// prune forgets the buckets without sessions: memory follows what is open.
func (g *gate) prune(user, cluster string) {
	if g.users[user].sessions == 0 {
		delete(g.users, user)
	}
	if g.clus[cluster].sessions == 0 {
		delete(g.clus, cluster)
	}
}

// open reports the sessions open, for tests and metrics.
func (g *gate) open() (users, clusters int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, b := range g.users {
		users += b.sessions
	}
	for _, b := range g.clus {
		clusters += b.sessions
	}
	return users, clusters
}

func nonNil(ls ...*rate.Limiter) []*rate.Limiter {
	var out []*rate.Limiter
	for _, l := range ls {
		if l != nil {
			out = append(out, l)
		}
	}
	return out
}

// session is one admitted request: its bounds, and the bytes it carried.
type session struct {
	user, cluster string
	gate          *gate
	rates         []*rate.Limiter
	idle          time.Duration
	once          sync.Once
	in, out       atomic.Int64 // bytes from and to the member

	mu    sync.Mutex // guards the fields below
	conns []net.Conn // the session's tunnels, for end
	ended bool
}

// end closes the session's tunnels, and any it opens after: the member
// side sees its connection go, the client its stream end.
func (s *session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	for _, c := range s.conns {
		c.Close()
	}
}

func (s *session) release() { s.once.Do(func() { s.gate.release(s.user, s.cluster) }) }

// wrap bounds c by the session's byte rates and idle timeout.
func (s *session) wrap(c net.Conn) net.Conn {
	ctx, cancel := context.WithCancel(context.Background())
	sc := &sessionConn{Conn: c, s: s, ctx: ctx, cancel: cancel}
	sc.idle = time.AfterFunc(s.idle, func() { sc.Close() })
	s.mu.Lock()
	s.conns = append(s.conns, sc)
	ended := s.ended
	s.mu.Unlock()
	if ended {
		sc.Close()
	}
	return sc
}

// sessionConn is a tunnel bounded by its session.
type sessionConn struct {
	net.Conn
	s      *session
	ctx    context.Context // ends with Close: unblocks rate waits
	cancel context.CancelFunc
	idle   *time.Timer
}

func (c *sessionConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p[:min(len(p), rateChunk)])
	c.s.in.Add(int64(n))
	return n, c.account(n, err)
}

func (c *sessionConn) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		chunk := p[written:min(len(p), written+rateChunk)]
		if err := c.account(len(chunk), nil); err != nil {
			return written, err
		}
		n, err := c.Conn.Write(chunk)
		written += n
		c.s.out.Add(int64(n))
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// account resets the idle timer and waits for n bytes of rate.
func (c *sessionConn) account(n int, err error) error {
	if n == 0 {
		return err
	}
	c.idle.Reset(c.s.idle)
	for _, r := range c.s.rates {
		if werr := r.WaitN(c.ctx, n); werr != nil && err == nil {
			err = net.ErrClosed
		}
	}
	return err
}

func (c *sessionConn) Close() error {
	c.idle.Stop()
	c.cancel()
	return c.Conn.Close()
}
