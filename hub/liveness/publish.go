package liveness

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/protocol"
)

// Tuned constants of the Publisher.
const (
	// flushInterval is how often pending renewals are written: at most one
	// batch of writes per second per replica, whatever the cluster count.
	// State changes are written at once.
	flushInterval = time.Second
	// maxBatch is the most puts in one etcd transaction, under etcd's
	// default --max-txn-ops of 128.
	maxBatch = 100
	// maxBatchBytes bounds the records of one transaction, bytes: 1 MiB,
	// under etcd's default request limit of 1.5 MiB, so that several
	// clusters' large heartbeats never make one transaction too large for
	// all of them. A record is at most a third larger than
	// HeartbeatLimits.MaxBytes, and one that is larger still goes alone.
	maxBatchBytes = 1 << 20
	// regrantDelay is how long Run waits before granting a new etcd lease
	// after a grant failed or the keep-alive ended.
	regrantDelay = time.Second
	// DefaultContentInterval is the shortest time between two writes of
	// one cluster's heartbeat record (PublisherConfig.ContentInterval): an
	// agent whose API list or capacity changes at every heartbeat costs
	// one record write per 10 s, not one per heartbeat; the latest content
	// is written once the interval has passed.
	DefaultContentInterval = 10 * time.Second
)

// Publisher writes the heartbeats agents send on this replica's streams
// to etcd, so that every replica's Leases (Follow) knows every cluster's
// liveness whichever replica holds its stream. It is what hub/agentapi
// calls Heartbeat on.
//
// Two records per cluster, both under one etcd lease of the replica (TTL
// the lease duration), so a dead replica's records go away by themselves:
// the heartbeat itself (/tether/liveness/hb/<cluster>, with the agent's
// capacity and API enablements, which can take tens of kilobytes), written
// when its content changes, at most once per Config.ContentInterval
// (coalesced: the latest content wins and is always written once the
// interval has passed), or when another replica wrote it since; and a
// renewal (/tether/liveness/beat/<cluster>, under 150 bytes: replica,
// time, digest of the heartbeat). A renewal is written at once when the
// cluster is new to this replica or its state (Ready, NotReady) changes
// (with the new content, which says the state; more than one such change
// within ContentInterval waits for it), at the next flush (within
// flushInterval) when the content changes, and otherwise once the last one
// is Config.Refresh old (default a quarter of the lease duration): with 10
// s heartbeats and a 40 s lease, one small put per cluster every 10-20 s,
// in transactions of up to maxBatch puts and maxBatchBytes. For 10,000
// clusters that is about 500-1,000 puts (about 100 KB) and 5-10
// transactions a second. While new content waits, renewals name the last
// written one, so the lease is renewed as before. A heartbeat past
// Config.HeartbeatLimits is never written: it renews the lease with the
// content last written, and a warning says so. The records of a cluster
// it has written no renewal for in a lease duration are deleted (sweep). A
// record going away only stops renewals; it never turns a cluster Unknown
// before its lease runs out in Leases.
type Publisher struct {
	client   *clientv3.Client
	replica  string
	refresh  time.Duration
	interval time.Duration // Config.ContentInterval
	ttl      time.Duration
	limits   HeartbeatLimits
	clock    Clock
	log      hclog.Logger
	local    *Leases       // Config.Local; nil: none
	kick     chan struct{} // wakes Run for an urgent write; buffered, 1

	mu      sync.Mutex // guards the fields below
	written map[string]published
	pending map[string]pendingHB
	flushes uint64 // transactions committed, for tests
	puts    uint64 // records written, for tests
	refused uint64 // heartbeats past the limits, for tests
}

// published is what was last written for a cluster.
type published struct {
	hb     *agentv1.Heartbeat
	at     time.Time // of the last renewal
	digest string    // of hb, in the content record
	// contentAt is when the content record was last written; urgentAt,
	// when a state change last had it written before ContentInterval
	// had passed.
	contentAt, urgentAt time.Time
}

// pendingHB is a heartbeat waiting for the next flush.
type pendingHB struct {
	hb *agentv1.Heartbeat
	at time.Time
}

// PublisherConfig configures a Publisher.
type PublisherConfig struct {
	// Replica names this replica in the records (its address).
	Replica string
	// LeaseDuration is the clusters' lease duration (the etcd lease TTL of
	// the records); zero means protocol.LeaseDuration.
	LeaseDuration time.Duration
	// Refresh is how old a record may get before an unchanged heartbeat is
	// written again; zero means LeaseDuration/4. It must stay well under
	// the lease duration minus the agents' heartbeat interval.
	Refresh time.Duration
	// ContentInterval is the shortest time between two writes of a
	// cluster's heartbeat record; zero means DefaultContentInterval.
	// Renewals do not wait for it.
	ContentInterval time.Duration
	// HeartbeatLimits bounds the heartbeats written.
	HeartbeatLimits HeartbeatLimits
	// Local is this replica's own Leases, or nil. A heartbeat handed to
	// the Publisher renews its cluster's lease there at once, with its
	// content, whatever the store's latency: a hub starved of CPU can take
	// longer than a lease to commit a record and read it back (or, after
	// a restart, to write a first record for each of 10,000 clusters), and
	// the clusters it hears from must not run out for that. Follow then
	// skips this replica's own records, applied already.
	Local *Leases
	// Clock is the time source; nil means RealClock.
	Clock Clock
	// Logger: nil logs nothing.
	Logger hclog.Logger
}

// NewPublisher returns a Publisher writing through st's etcd client.
func NewPublisher(st *store.Store, cfg PublisherConfig) *Publisher {
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = protocol.LeaseDuration
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = cfg.LeaseDuration / 4
	}
	if cfg.ContentInterval <= 0 {
		cfg.ContentInterval = DefaultContentInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Local != nil {
		cfg.Local.setOwn(cfg.Replica)
	}
	return &Publisher{client: st.Client(), replica: cfg.Replica, refresh: cfg.Refresh, interval: cfg.ContentInterval,
		ttl: cfg.LeaseDuration, limits: cfg.HeartbeatLimits.withDefaults(), clock: cfg.Clock,
		log: cfg.Logger.Named("liveness"), local: cfg.Local, kick: make(chan struct{}, 1),
		written: make(map[string]published), pending: make(map[string]pendingHB)}
}

// CheckHeartbeat says why hb is past Config.HeartbeatLimits (wrapping
// ErrHeartbeatTooLarge), or returns nil: hub/agentapi asks before handing
// a heartbeat over, and refuses it past them.
func (p *Publisher) CheckHeartbeat(hb *agentv1.Heartbeat) error { return p.limits.Check(hb) }

// Heartbeat renews cluster's lease in Config.Local with hb at once, and
// queues hb for writing if it is due (see Publisher). A heartbeat past the
// limits only renews the lease, with the content it has, and has the
// content last written renewed, if any. It never blocks on I/O.
func (p *Publisher) Heartbeat(cluster string, hb *agentv1.Heartbeat) {
	now := p.clock.Now()
	tooLarge := p.limits.Check(hb)
	p.mu.Lock()
	defer p.mu.Unlock()
	last, ok := p.written[cluster]
	if tooLarge != nil {
		p.refused++
		p.log.Warn("heartbeat not written: it renews the lease with the content last written", "cluster", cluster, "error", tooLarge)
		p.Touch(cluster)
		if !ok {
			return
		}
		hb = last.hb
	} else if p.local != nil {
		p.local.Heartbeat(cluster, hb) // under p.mu: in the order the records are planned
	}
	urgent := !ok || stateOf(last.hb) != stateOf(hb)
	due := urgent || !proto.Equal(last.hb, hb) || now.Sub(last.at) >= p.refresh
	if !due {
		delete(p.pending, cluster) // the latest heartbeat wins, even over older content waiting
		return
	}
	p.pending[cluster] = pendingHB{hb: hb, at: now}
	if urgent {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// Touch keeps cluster's lease in Config.Local valid (Leases.Touch), and
// writes nothing: hub/agentapi calls it for a stream of the cluster's
// agent that it holds back unread.
func (p *Publisher) Touch(cluster string) {
	if p.local != nil {
		p.local.Touch(cluster)
	}
}

// Counts returns how many transactions and records were written.
func (p *Publisher) Counts() (flushes, puts uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushes, p.puts
}

// Run writes pending heartbeats until ctx ends, then returns nil. It keeps
// one etcd lease alive for the records; when the lease is lost (etcd
// unreachable longer than its TTL) it grants a new one and writes every
// cluster again at its next heartbeat.
func (p *Publisher) Run(ctx context.Context) error {
	for {
		err := p.withLease(ctx)
		if ctx.Err() != nil {
			return nil
		}
		p.log.Warn("liveness lease lost; granting a new one", "error", err, "in", regrantDelay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(regrantDelay):
		}
	}
}

// withLease grants a lease and flushes under it until the lease is lost
// (its error) or ctx ends.
func (p *Publisher) withLease(ctx context.Context) error {
	ttl := max(int64(p.ttl/time.Second), 1)
	grant, err := p.client.Grant(ctx, ttl)
	if err != nil {
		return fmt.Errorf("grant liveness lease: %w", err)
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	alive, err := p.client.KeepAlive(lctx, grant.ID)
	if err != nil {
		return fmt.Errorf("keep liveness lease alive: %w", err)
	}
	p.forgetWritten() // records under an earlier lease may be gone
	defer p.revoke(grant.ID, ctx)
	ticker := time.NewTicker(flushInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-alive:
			if !ok {
				return fmt.Errorf("liveness lease %x expired", grant.ID)
			}
		case <-ticker.C:
		case <-p.kick:
		}
		if err := p.flush(ctx, grant.ID); err != nil {
			p.log.Warn("write liveness records", "error", err)
		}
		if err := p.sweep(ctx, grant.ID); err != nil {
			p.log.Warn("delete liveness records", "error", err)
		}
	}
}

// forgetWritten makes every cluster's next heartbeat urgent.
func (p *Publisher) forgetWritten() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.written = make(map[string]published)
}

// revoke drops the records of a replica that stops on purpose; the next
// holder of each stream writes its own at once. A stop never turns a
// cluster Unknown before its lease runs out elsewhere.
func (p *Publisher) revoke(id clientv3.LeaseID, ctx context.Context) {
	if ctx.Err() == nil {
		return // lease lost, not stopping: nothing to revoke
	}
	rctx, cancel := context.WithTimeout(context.Background(), regrantDelay*5)
	defer cancel()
	if _, err := p.client.Revoke(rctx, id); err != nil {
		p.log.Debug("revoke liveness lease", "error", err)
	}
}

// flush writes what is due of the pending heartbeats (plan) in batches:
// a renewal for each, and the heartbeat itself when its content differs
// from the one last written. A batch that fails goes back to pending
// unless a newer heartbeat came meanwhile.
func (p *Publisher) flush(ctx context.Context, lease clientv3.LeaseID) error {
	items := p.due(p.clock.Now())
	var ops []clientv3.Op
	var done []item
	var firstErr error
	size := 0
	commit := func() {
		if len(ops) == 0 {
			return
		}
		_, err := p.client.Txn(ctx).Then(ops...).Commit()
		p.done(done, err)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("put %d liveness records: %w", len(ops), err)
		}
		ops, done, size = ops[:0], done[:0], 0
	}
	for _, it := range items {
		cops, n, digest, err := p.ops(it.cluster, it.next, it.last, lease)
		if err != nil {
			p.log.Warn("skip heartbeat", "cluster", it.cluster, "error", err)
			continue
		}
		if len(ops)+len(cops) > maxBatch || size+n > maxBatchBytes {
			commit()
		}
		it.next.digest = digest
		ops, size = append(ops, cops...), size+n
		done = append(done, it)
	}
	commit()
	return firstErr
}

// ops are the writes of one cluster's heartbeat: its content first, then
// the renewal (a watcher sees them in this order), and their size in
// bytes. The content goes when it changed since last, and also when the
// record is not under this replica's lease (another replica wrote it
// since, or it is gone): the renewal names the content by digest, and must
// name what etcd holds.
func (p *Publisher) ops(cluster string, w published, last string, lease clientv3.LeaseID) ([]clientv3.Op, int, string, error) {
	enc, err := encodeHeartbeat(w.hb)
	if err != nil {
		return nil, 0, "", err
	}
	b, err := encodeBeat(p.replica, w.at, enc.digest)
	if err != nil {
		return nil, 0, "", err
	}
	hbKey := store.HeartbeatKey(cluster)
	putContent := clientv3.OpPut(hbKey, string(enc.content), clientv3.WithLease(lease))
	putBeat := clientv3.OpPut(store.LivenessKey(cluster), string(b), clientv3.WithLease(lease))
	size := len(enc.content) + len(b)
	if enc.digest != last {
		return []clientv3.Op{putContent, putBeat}, size, enc.digest, nil
	}
	ours := clientv3.Compare(clientv3.LeaseValue(hbKey), "=", lease)
	return []clientv3.Op{clientv3.OpTxn([]clientv3.Cmp{ours}, []clientv3.Op{putBeat}, []clientv3.Op{putContent, putBeat})}, size, enc.digest, nil
}

// done records a committed batch as written, or puts a failed one back.
func (p *Publisher) done(items []item, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.flushes++
		p.puts += uint64(len(items))
	}
	for _, it := range items {
		if err == nil {
			p.written[it.cluster] = it.next
			continue
		}
		if _, newer := p.pending[it.cluster]; !newer {
			p.pending[it.cluster] = it.h
		}
	}
}
