package leader

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/tetherproj/tether/hub/store"
)

// DefaultPrefix is where the replicas campaign; the leader's key is
// DefaultPrefix/<lease id in hex>.
const DefaultPrefix = store.Root + "leader"

// DefaultTTL is the session lease: a leader that dies is replaced at most
// this long after its last keep-alive, and a leader cut off from etcd stops
// its controllers at most this long after its last successful keep-alive.
// 10 s keeps failover under the 15 s DESIGN §7 asks for while riding out
// an etcd leader election (about 1 s with etcd's defaults).
const DefaultTTL = 10 * time.Second

// retryDelay is how long Run waits before campaigning again after a session
// or campaign failed for another reason than its context (etcd
// unreachable), so an outage is not hammered.
const retryDelay = time.Second

// resignTimeout bounds the resignation when Run stops.
const resignTimeout = 5 * time.Second

// Config configures an Elector.
type Config struct {
	// Prefix of the election's keys; empty means DefaultPrefix.
	Prefix string
	// TTL of the session's lease, rounded down to whole seconds (etcd's
	// unit), at least one; zero means DefaultTTL.
	TTL time.Duration
	// Name is stored as the leader's value, for operators (etcdctl get
	// --prefix /tether/leader): the replica's address.
	Name string
	// Alone says this is the only replica there can be: a hub on its
	// embedded etcd, whose data directory no other process can open. It
	// leads from the start until Run ends, with the fence open (no
	// campaign, no session, no key), and nothing else ends its term. A
	// session would end it whenever the process is too starved of CPU to
	// keep the session's lease alive for TTL (10,000 agents reconnecting
	// at once did, three times in two minutes), and every controller
	// would stop, then list and decode every binding again, when CPU is
	// shortest and with no other replica to take over. TTL is unused.
	Alone bool
}

// Elector campaigns for leadership and runs the leader's work while elected.
type Elector struct {
	client *clientv3.Client
	fence  *store.Fence
	cfg    Config
	log    hclog.Logger
	// leading is true while lead runs (IsLeader, /metrics).
	leading atomic.Bool
	// terms counts the terms won.
	terms atomic.Uint64
}

// New returns an elector over client that holds fence while it leads.
func New(client *clientv3.Client, fence *store.Fence, cfg Config, logger hclog.Logger) *Elector {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	return &Elector{client: client, fence: fence, cfg: cfg, log: logger.Named("leader")}
}

// IsLeader reports whether this replica leads now.
func (e *Elector) IsLeader() bool { return e.leading.Load() }

// Terms returns how many times this replica was elected.
func (e *Elector) Terms() uint64 { return e.terms.Load() }

// Run campaigns and runs lead during each term won, until ctx ends (nil) or
// lead fails (its error). A term's context ends when leadership is lost;
// lead must return then, and Run campaigns again.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context) error) error {
	if e.cfg.Alone {
		return e.runAlone(ctx, lead)
	}
	for {
		err := e.term(ctx, lead)
		if ctx.Err() != nil {
			return nil
		}
		var failed leadError
		if errors.As(err, &failed) {
			return failed.err
		}
		if err != nil {
			e.log.Warn("campaign failed; trying again", "error", err, "in", retryDelay)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(retryDelay):
			}
		}
	}
}

// leadError is lead's own failure, which ends Run.
type leadError struct{ err error }

func (l leadError) Error() string { return l.err.Error() }

// term campaigns with a new session, runs lead while elected and resigns.
func (e *Elector) term(ctx context.Context, lead func(ctx context.Context) error) error {
	ttl := max(int(e.cfg.TTL/time.Second), 1)
	sess, err := concurrency.NewSession(e.client, concurrency.WithTTL(ttl), concurrency.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("start session: %w", err)
	}
	defer sess.Close() // revokes the lease: the next leader need not wait for it
	el := concurrency.NewElection(sess, e.cfg.Prefix)
	if err := el.Campaign(ctx, e.cfg.Name); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	key, rev := el.Key(), el.Rev()
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lost := e.watchTerm(tctx, cancel, sess, key, rev)
	e.fence.Hold(key, rev)
	e.leading.Store(true)
	e.terms.Add(1)
	e.log.Info("elected leader", "key", key, "revision", rev, "name", e.cfg.Name)
	err = lead(tctx)
	ended := tctx.Err() != nil // lost (or stopping) before lead returned
	e.leading.Store(false)
	e.fence.Release()
	cancel(nil)
	<-lost
	if ctx.Err() != nil {
		e.resign(sess)
		e.log.Info("stopped leading", "key", key)
		return nil
	}
	if err != nil && !ended {
		return leadError{err: err}
	}
	e.log.Warn("lost leadership; campaigning again", "key", key, "cause", context.Cause(tctx))
	return nil
}

// Errors that end a term, as its context's cause.
var (
	errSessionDone = errors.New("leader: session lease expired or not kept alive")
	errKeyGone     = errors.New("leader: leadership key deleted or replaced")
)

// watchTerm cancels the term when the session ends or the leadership key
// is deleted or rewritten by someone else. The returned channel closes
// once its goroutine has exited (after tctx ends).
func (e *Elector) watchTerm(tctx context.Context, cancel context.CancelCauseFunc, sess *concurrency.Session, key string, rev int64) <-chan struct{} {
	done := make(chan struct{})
	wch := e.client.Watch(clientv3.WithRequireLeader(tctx), key, clientv3.WithRev(rev+1))
	go func() {
		defer close(done)
		for {
			select {
			case <-tctx.Done():
				return
			case <-sess.Done():
				cancel(errSessionDone)
				return
			case resp, ok := <-wch:
				if !ok || resp.Err() != nil {
					// No leader for the member (partition) or a closed watch: the
					// session's keep-alive decides; keep waiting on it alone.
					wch = nil
					continue
				}
				for _, ev := range resp.Events {
					if ev.Type == clientv3.EventTypeDelete || ev.Kv.CreateRevision != rev {
						cancel(errKeyGone)
						return
					}
				}
			}
		}
	}()
	return done
}

// resign gives leadership up at once by revoking the session's lease
// (which deletes the key), so the next replica need not wait for the lease
// to run out. The session's own Close cannot: its context has ended.
func (e *Elector) resign(sess *concurrency.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), resignTimeout)
	defer cancel()
	if _, err := e.client.Revoke(ctx, sess.Lease()); err != nil {
		e.log.Warn("resign", "error", err)
	}
}
