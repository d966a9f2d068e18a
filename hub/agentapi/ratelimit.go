package agentapi

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/peer"
)

// maxRegistrationSources is how many source addresses the registration
// limits remember at once (about 100 bytes each). A source idle long enough
// to have refilled its whole burst is forgotten first (forgetting it
// changes nothing); when all are busy, the least recently seen is: it
// starts again with a full burst, still under the total ceiling.
const maxRegistrationSources = 10000

// registrationLimits bounds Register: each source address (the TCP peer's
// IP; behind a proxy that does not preserve it, every agent shares the
// proxy's) at RegistrationRate with bursts of RegistrationBurst, so one
// source cannot use up another's budget; and all sources together at
// RegistrationTotalRate with bursts of RegistrationTotalBurst, a bound on
// CSR signing and store writes.
type registrationLimits struct {
	total   *limiter
	sources *keyedLimiters
}

func newRegistrationLimits(cfg Config) *registrationLimits {
	return &registrationLimits{total: newLimiter(cfg.RegistrationTotalRate, cfg.RegistrationTotalBurst),
		sources: newKeyedLimiters(cfg.RegistrationRate, cfg.RegistrationBurst, maxRegistrationSources)}
}

// allow takes one registration of source at now, or says (ErrLimit) which
// limit refuses it. A registration its source's limit refuses takes nothing
// of the total.
func (r *registrationLimits) allow(source string, now time.Time) error {
	if !r.sources.get(source, now).allow(now) {
		return fmt.Errorf("%w: registration rate limit: the hub serves at most %g registrations per second from one address (burst %d); retry later",
			ErrLimit, r.sources.rate, r.sources.burst)
	}
	if !r.total.allow(now) {
		return fmt.Errorf("%w: registration rate limit: the hub serves at most %g registrations per second in all (burst %d); retry later",
			ErrLimit, r.total.rate, int(r.total.burst))
	}
	return nil
}

// maxStreamOpenClusters is how many clusters the stream-open limits
// remember at once (about 100 bytes each); as with registrations, a
// cluster whose burst has refilled is forgotten first.
const maxStreamOpenClusters = 100000

// streamOpenLimits bounds how often one cluster opens a stream
// (Config.StreamOpenRate, StreamOpenBurst): an agent reconnecting in a tight
// loop (a bug, a stolen certificate) makes the hub verify, track and
// resync it each time. Past the bound its Connect ends at once with
// Goodbye LIMIT_EXCEEDED and a retry-after of at most the heartbeat
// interval, so that a cluster is never refused long enough to lose its
// lease; other clusters are not affected.
type streamOpenLimits struct {
	maxWait  time.Duration
	clusters *keyedLimiters
}

func newStreamOpenLimits(cfg Config) *streamOpenLimits {
	return &streamOpenLimits{maxWait: cfg.HeartbeatInterval,
		clusters: newKeyedLimiters(cfg.StreamOpenRate, cfg.StreamOpenBurst, maxStreamOpenClusters)}
}

// allow takes one stream open of cluster at now, or says (ErrLimit, with a
// retry-after) that the cluster opens streams too often.
func (o *streamOpenLimits) allow(cluster string, now time.Time) error {
	l := o.clusters
	if l.get(cluster, now).allow(now) {
		return nil
	}
	wait := min(time.Duration(float64(time.Second)/l.rate), o.maxWait)
	return retryAfter{after: wait, err: fmt.Errorf(
		"%w: stream open rate limit: cluster %q opened streams faster than the hub accepts (at most %g per second, bursts of %d); retry in %s",
		ErrLimit, cluster, l.rate, l.burst, wait)}
}

// keyedLimiters holds one limiter per key (a source address, a cluster),
// at most max of them: past it, those whose burst has refilled are
// forgotten first (forgetRefilled).
type keyedLimiters struct {
	rate  float64
	burst int
	max   int

	mu sync.Mutex // guards m
	m  map[string]*limiter
}

func newKeyedLimiters(rate float64, burst, max int) *keyedLimiters {
	return &keyedLimiters{rate: rate, burst: burst, max: max, m: map[string]*limiter{}}
}

// get returns the limiter of key, making room for it if need be.
func (k *keyedLimiters) get(key string, now time.Time) *limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l, ok := k.m[key]; ok {
		return l
	}
	if len(k.m) >= k.max {
		forgetRefilled(k.m, k.rate, k.burst, now)
	}
	l := newLimiter(k.rate, k.burst)
	k.m[key] = l
	return l
}

// len is how many keys are remembered.
func (k *keyedLimiters) len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}

// forgetRefilled drops from m every limiter whose burst has refilled by
// now, or else the least recently seen one.
func forgetRefilled(m map[string]*limiter, rate float64, burst int, now time.Time) {
	refill := time.Duration(float64(burst) / rate * float64(time.Second))
	var oldest string
	var oldestAt time.Time
	n := len(m)
	for k, l := range m {
		last := l.lastSeen()
		if now.Sub(last) >= refill {
			delete(m, k)
			continue
		}
		if oldest == "" || last.Before(oldestAt) {
			oldest, oldestAt = k, last
		}
	}
	if len(m) >= n && oldest != "" {
		delete(m, oldest)
	}
}

// sourceOf is the IP address of the call's peer, "" when unknown.
func sourceOf(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(p.Addr.String())
	if err != nil {
		return p.Addr.String()
	}
	return host
}

// limiter is a token bucket: rate per second, up to burst at once.
type limiter struct {
	rate  float64
	burst float64

	mu     sync.Mutex // guards the fields below
	tokens float64
	last   time.Time
}

func newLimiter(rate float64, burst int) *limiter {
	return &limiter{rate: rate, burst: float64(burst), tokens: float64(burst)}
}

// allow takes one token at now, if there is one.
func (l *limiter) allow(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// lastSeen is when allow was last called.
func (l *limiter) lastSeen() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}
