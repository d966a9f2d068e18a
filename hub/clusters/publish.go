package clusters

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
	// regrantDelay is how long Run waits before granting a new etcd lease
	// after a grant failed or the keep-alive ended.
	regrantDelay = time.Second
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
// only when its content changes or another replica wrote it since; and a
// renewal (/tether/liveness/beat/<cluster>, under 150 bytes: replica,
// time, digest of the heartbeat). A renewal is written at once when the
// cluster is new to this replica or its state (Ready, NotReady) changes,
// at the next flush (within flushInterval) when the content changes, and
// otherwise once the last one is Config.Refresh old (default a quarter of
// the lease duration): with 10 s heartbeats and a 40 s lease, one small
// put per cluster every 10-20 s, in transactions of up to maxBatch puts.
// For 10,000 clusters that is about 500-1,000 puts (about 100 KB) and 5-10
// transactions a second. A record going away only stops renewals; it never
// turns a cluster Unknown before its lease runs out in Leases.
type Publisher struct {
	client  *clientv3.Client
	replica string
	refresh time.Duration
	ttl     time.Duration
	clock   Clock
	log     hclog.Logger
	kick    chan struct{} // wakes Run for an urgent write; buffered, 1

	mu      sync.Mutex // guards the fields below
	written map[string]published
	pending map[string]pendingHB
	flushes uint64 // transactions committed, for tests
	puts    uint64 // records written, for tests
}

// published is what was last written for a cluster.
type published struct {
	hb     *agentv1.Heartbeat
	at     time.Time
	digest string // of hb, in the content record
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
	// the records); zero means DefaultLeaseDuration.
	LeaseDuration time.Duration
	// Refresh is how old a record may get before an unchanged heartbeat is
	// written again; zero means LeaseDuration/4. It must stay well under
	// the lease duration minus the agents' heartbeat interval.
	Refresh time.Duration
	// Clock is the time source; nil means RealClock.
	Clock Clock
	// Logger: nil logs nothing.
	Logger hclog.Logger
}

// NewPublisher returns a Publisher writing through st's etcd client.
func NewPublisher(st *store.Store, cfg PublisherConfig) *Publisher {
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = DefaultLeaseDuration
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = cfg.LeaseDuration / 4
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Publisher{client: st.Client(), replica: cfg.Replica, refresh: cfg.Refresh, ttl: cfg.LeaseDuration,
		clock: cfg.Clock, log: cfg.Logger.Named("liveness"), kick: make(chan struct{}, 1),
		written: make(map[string]published), pending: make(map[string]pendingHB)}
}

// Heartbeat queues cluster's heartbeat for writing if it is due (see
// Publisher). It never blocks on I/O.
func (p *Publisher) Heartbeat(cluster string, hb *agentv1.Heartbeat) {
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	last, ok := p.written[cluster]
	urgent := !ok || stateOf(last.hb) != stateOf(hb)
	due := urgent || !proto.Equal(last.hb, hb) || now.Sub(last.at) >= p.refresh
	if !due {
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

// flush writes the pending heartbeats in batches: a renewal for each, and
// the heartbeat itself when its content differs from the one last
// written. A batch that fails goes back to pending unless a newer
// heartbeat came meanwhile.
func (p *Publisher) flush(ctx context.Context, lease clientv3.LeaseID) error {
	p.mu.Lock()
	batch := p.pending
	p.pending = make(map[string]pendingHB)
	digests := make(map[string]string, len(batch))
	for c := range batch {
		digests[c] = p.written[c].digest
	}
	p.mu.Unlock()
	var ops []clientv3.Op
	var done []written
	var firstErr error
	commit := func() {
		if len(ops) == 0 {
			return
		}
		_, err := p.client.Txn(ctx).Then(ops...).Commit()
		p.done(batch, done, err)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("put %d liveness records: %w", len(ops), err)
		}
		ops, done = ops[:0], done[:0]
	}
	for cluster, h := range batch {
		cops, digest, err := p.ops(cluster, h, digests[cluster], lease)
		if err != nil {
			p.log.Warn("skip heartbeat", "cluster", cluster, "error", err)
			continue
		}
		ops = append(ops, cops...)
		done = append(done, written{cluster: cluster, digest: digest})
		if len(ops) >= maxBatch-1 {
			commit()
		}
	}
	commit()
	return firstErr
}

// written is one cluster of a batch and the digest its renewal names.
type written struct {
	cluster, digest string
}

// ops are the writes of one cluster's heartbeat: its content first, then
// the renewal (a watcher sees them in this order). The content goes when it
// changed since last, and also when the record is not under this replica's
// lease (another replica wrote it since, or it is gone): the renewal names
// the content by digest, and must name what etcd holds.
func (p *Publisher) ops(cluster string, h pendingHB, last string, lease clientv3.LeaseID) ([]clientv3.Op, string, error) {
	enc, err := encodeHeartbeat(h.hb)
	if err != nil {
		return nil, "", err
	}
	b, err := encodeBeat(p.replica, h.at, enc.digest)
	if err != nil {
		return nil, "", err
	}
	hbKey := store.HeartbeatKey(cluster)
	putContent := clientv3.OpPut(hbKey, string(enc.content), clientv3.WithLease(lease))
	putBeat := clientv3.OpPut(store.LivenessKey(cluster), string(b), clientv3.WithLease(lease))
	if enc.digest != last {
		return []clientv3.Op{putContent, putBeat}, enc.digest, nil
	}
	ours := clientv3.Compare(clientv3.LeaseValue(hbKey), "=", lease)
	return []clientv3.Op{clientv3.OpTxn([]clientv3.Cmp{ours}, []clientv3.Op{putBeat}, []clientv3.Op{putContent, putBeat})}, enc.digest, nil
}

// done records a committed batch as written, or puts a failed one back.
func (p *Publisher) done(batch map[string]pendingHB, clusters []written, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.flushes++
		p.puts += uint64(len(clusters))
	}
	for _, w := range clusters {
		h := batch[w.cluster]
		if err == nil {
			p.written[w.cluster] = published{hb: h.hb, at: h.at, digest: w.digest}
			continue
		}
		if _, newer := p.pending[w.cluster]; !newer {
			p.pending[w.cluster] = h
		}
	}
}
