package hubclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/grpc"
)

// applyWorkers is how many works are applied or deleted at once; a slow
// work (a CRD waiting to be established) does not hold up the others.
const applyWorkers = 4

// digestFlushInterval is how often the state writer looks at the reported
// status digests; digestMaxTicks (a minute) is the longest they wait
// unwritten while reports keep coming (digestpace.go).
const (
	digestFlushInterval = 5 * time.Second
	digestMaxTicks      = 12
)

// Config configures a Client.
type Config struct {
	// Addrs are the hub's addresses, host:port each: one hub (or a load
	// balancer in front of its replicas), or each replica of the hub, all
	// of one CA; the stream goes to one of them and moves to another when
	// it ends (Dial), trying another first when that one said Goodbye
	// SHUTDOWN or REBALANCE (moveon.go).
	Addrs []string
	// TLS carries the agent's client certificate and the hub CA; its
	// ServerName is ignored: each address is verified for its own host.
	TLS *tls.Config
	// AgentVersion is sent in Hello and Heartbeat.
	AgentVersion string
	// Store is the local state; its content is loaded by New.
	Store *state.Store
	// Applier applies works; required.
	Applier Applier
	// Status produces status reports; nil sends none.
	Status StatusSource
	// Capacity describes the cluster for heartbeats; nil sends heartbeats
	// with only the agent version.
	Capacity CapacitySource
	// Customizations loads the interpreter customizations the hub sends
	// (and New those the state holds), which are persisted; nil ignores
	// them and names none in Hello.
	Customizations Customizations
	// OnSettings, when set, receives the hub's Settings (from Welcome, then
	// every change) on the stream's goroutine; it must not block.
	OnSettings func(*agentv1.Settings)
	// EvictionGrace is how long an orphaned work is kept before its
	// objects are deleted; 0 keeps them forever.
	EvictionGrace time.Duration
	// Credentials, when set, are renewed over the stream before they
	// expire (renewal.go); TLS must read them on every handshake. Nil: the
	// client never renews (certificates managed outside the agent).
	Credentials Credentials
	// Backoff returns the wait before reconnect number attempt (0 for the
	// first); nil is the jittered exponential backoff of backoff.go.
	Backoff func(attempt int) time.Duration
	// Registerer, when set, registers the client's metrics.
	Registerer prometheus.Registerer
	// DialOptions are added to the client's own (tests).
	DialOptions []grpc.DialOption
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Client holds the agent's one stream to the hub and reconciles the works
// it holds (see the package doc). Build it with New; call Run once.
type Client struct {
	cfg   Config
	log   hclog.Logger
	conn  *grpc.ClientConn // replaced by connectLoop (redial)
	queue *queue
	wake  chan struct{} // buffered, 1: outbox has messages
	// renewal is the certificate renewal's state; only the stream
	// goroutine (connectLoop) uses it.
	renewal renewal
	// fresh: the next stream needs a new connection, the hub having said
	// Goodbye SHUTDOWN or REBALANCE (moveon.go). Only connectLoop uses it.
	fresh bool
	// avoid lists the addresses that said Goodbye SHUTDOWN or REBALANCE
	// since the last stream that reached SyncDone, the most recent last; a
	// new connection tries them last (dial). Only connectLoop uses it.
	avoid []string
	// maxMessageBytes is the hub's Settings.limits.max_message_bytes, the
	// largest message it accepts (fit), from the last Settings; 0 before
	// any. Only the stream goroutine (connectLoop) uses it.
	maxMessageBytes int64
	// metrics count what the client could not send as it was.
	metrics *metrics

	saveWake chan struct{} // buffered, 1: unsavedState holds something

	mu     sync.Mutex // guards books, outbox and unsavedState; never held for I/O
	books  *Books
	outbox []*agentv1.AgentMessage // for the current stream; dropped when it ends
	// unsavedState is what the state writer (writeState) is to write.
	unsavedState unsaved
}

// unsaved is what the state writer has to write; zero fields are nothing.
type unsaved struct {
	hub            *hubRecord              // the hub identity and its store's lineage
	customizations *agentv1.Customizations // the set loaded last
}

// hubRecord is what the state keeps of the hub the works came from.
type hubRecord struct {
	identity string
	lineage  state.Lineage
}

// New loads the local state and returns a client whose queue holds every
// held work to apply (and every deletion a restart interrupted); it does
// not connect yet. A corrupt state file is state.ErrCorrupt.
func New(cfg Config, logger hclog.Logger) (*Client, error) {
	if len(cfg.Addrs) == 0 || cfg.TLS == nil || cfg.Store == nil || cfg.Applier == nil {
		return nil, errors.New("hubclient: Addrs, TLS, Store and Applier are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Backoff == nil {
		cfg.Backoff = reconnect.Delay
	}
	snap, err := cfg.Store.Load(context.Background()) // bounded by the store
	if err != nil {
		return nil, err
	}
	conn, err := dial(cfg, nil)
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:      cfg,
		log:      logger.Named("hubclient"),
		conn:     conn,
		queue:    newQueue(cfg.Now),
		wake:     make(chan struct{}, 1),
		books:    NewBooks(snap),
		saveWake: make(chan struct{}, 1),
	}
	if c.metrics, err = newMetrics(cfg.Registerer, c.held); err != nil {
		conn.Close()
		return nil, err
	}
	c.loadHeldCustomizations(snap.Customizations)
	c.mu.Lock()
	c.queueHeld()
	c.mu.Unlock()
	return c, nil
}

// held is how many works the client holds.
func (c *Client) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.books.Len()
}

// Synced reports whether the client has received a hub's SyncDone since
// it was built: it has heard, at least once, everything the hub holds for
// the cluster.
func (c *Client) Synced() bool { return c.metrics.synced.Load() }

// Alive returns nil once the client's lock, which every part takes and
// none holds for I/O, could be taken; an error when ctx ends first (a
// part wedged holding it). A wedged lock leaves one goroutine waiting for
// it per call.
func (c *Client) Alive(ctx context.Context) error {
	got := make(chan struct{})
	go func() {
		c.mu.Lock()
		c.mu.Unlock() // only the taking matters
		close(got)
	}()
	select {
	case <-got:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("hub client wedged: its lock not taken: %w", ctx.Err())
	}
}

// Run runs the whole client until ctx ends, then closes it: Apply, Evict
// and SaveState beside Stream, which holds the stream to the hub
// (reconnecting with backoff). It returns nil then, or ErrClusterRemoved;
// every goroutine it started has exited. agent.Run composes the same
// parts with the member side's.
func (c *Client) Run(ctx context.Context) error {
	defer c.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, part := range []func(context.Context) error{c.Apply, c.Evict, c.SaveState} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = part(ctx) // nil: they end with ctx
		}()
	}
	err := c.Stream(ctx)
	cancel()
	wg.Wait()
	return err
}

// Stream holds the stream to the hub until ctx ends, reconnecting with
// backoff: hub messages go through the Books (which queue each work for
// Apply), acks, heartbeats and status reports go to the hub. It returns
// nil when ctx ends, or ErrClusterRemoved.
func (c *Client) Stream(ctx context.Context) error {
	return c.connectLoop(ctx)
}

// Apply runs the apply workers until ctx ends: each writes a work's
// record to the state, then applies or deletes it, and records the
// result for the stream. Every held work (and every deletion a restart
// interrupted) is queued by New, so a restarted agent reconciles what it
// holds with or without a hub. It returns nil once they have exited.
func (c *Client) Apply(ctx context.Context) error {
	var wg sync.WaitGroup
	for range applyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.work(ctx)
		}()
	}
	wg.Wait()
	return nil
}

// Evict deletes orphaned works past Config.EvictionGrace until ctx ends;
// with eviction off it only waits. It returns nil.
func (c *Client) Evict(ctx context.Context) error {
	c.evict(ctx)
	<-ctx.Done()
	return nil
}

// SaveState writes the hub identity and the customizations when they
// change, and the status digests every digestFlushInterval, until ctx
// ends. It returns nil; Close writes what is left.
func (c *Client) SaveState(ctx context.Context) error {
	c.writeState(ctx)
	return nil
}

// Close writes what the state writer has left (each write bounded by the
// store) and closes the connection; call it once every part has returned.
func (c *Client) Close() {
	c.save(context.Background(), true)
	c.conn.Close() // the connection of the moment
}

// queueHeld queues every held work to apply, and every deletion decided
// before a restart to carry out. mu is held.
func (c *Client) queueHeld() {
	held, resume := c.books.Start(), c.books.Resume()
	lin := c.books.Lineage()
	c.log.Info("agent state loaded", "hub_identity", c.books.HubIdentity(), "store_epoch", lin.Epoch, "store_revision", lin.Revision,
		"works", len(held), "pending_deletions", len(resume))
	if lin.Distrusted() {
		c.log.Warn("the hub is held NOT AUTHORITATIVE for this agent until an operator adopts the fleet", "reason", lin.Distrust, "since", lin.Since)
	}
	for _, w := range held {
		c.queue.add(w.Key, task{work: w})
	}
	for i := range resume {
		d := resume[i]
		c.log.Info("resuming a deletion decided before the restart", "work", d.Work.Key, "version", d.Work.Version, "reason", d.Reason)
		c.queue.add(d.Work.Key, task{deletion: &d})
	}
}

// connectLoop holds a stream, and reconnects after backoff when it ends.
func (c *Client) connectLoop(ctx context.Context) error {
	attempt := 0
	for {
		if err := c.redial(); err != nil {
			return err
		}
		res := c.stream(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(res.err, ErrClusterRemoved) {
			return res.err
		}
		if res.synced {
			attempt = 0
			c.avoid = nil
		}
		wait := c.cfg.Backoff(attempt)
		attempt++
		if res.retryAfter > 0 {
			wait = retryAfterDelay(res.retryAfter, rand.Float64())
		}
		c.log.Warn("hub stream ended; reconnecting", "error", res.err, "wait", wait)
		if res.moveOn {
			c.moveOn(ctx, res.addr)
		}
		if !sleep(ctx, wait) {
			return nil
		}
	}
}

// redial replaces the connection between two streams (no stream is on
// it): after a renewal, streams on a connection share its TLS handshake,
// so only a new connection presents the new certificate (the hub refuses
// the old one once it expires); after a Goodbye SHUTDOWN or REBALANCE, so
// that the next stream tries another replica first (moveon.go). The new
// connection is lazy: it costs the TCP and TLS handshakes of the next
// stream, as any reconnect after a hub restart does.
func (c *Client) redial() error {
	if !c.renewal.redial && !c.fresh {
		return nil
	}
	conn, err := dial(c.cfg, c.avoid)
	if err != nil {
		return err
	}
	c.conn.Close()
	c.conn, c.renewal.redial, c.fresh = conn, false, false
	c.log.Debug("new connection to the hub", "tried_last", c.avoid)
	return nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// carryOut does what e says, without I/O (mu is held): each work's record
// is written by the apply workers before its apply or deletion (persist:
// nothing goes on from a record that was not written), the hub identity
// by the state writer, and messages are queued for the stream.
func (c *Client) carryOut(e Effects) {
	for _, n := range e.Notes {
		c.log.Info(n)
	}
	if e.Hub != "" || e.Lineage {
		c.unsavedState.hub = &hubRecord{identity: c.books.HubIdentity(), lineage: c.books.Lineage()}
		if e.Hub != "" || e.LineageNow {
			c.saveSoon() // else with the next periodic write: a revision seen
		}
	}
	then := make(map[string]task, len(e.Apply)+len(e.Delete))
	for _, w := range e.Apply {
		then[w.Key] = task{work: w}
	}
	for i := range e.Delete {
		then[e.Delete[i].Work.Key] = task{deletion: &e.Delete[i]}
	}
	for _, h := range e.Persist {
		t, ok := then[h.Work.Key]
		if !ok {
			t = task{recordOnly: true}
		}
		t.persist = true
		delete(then, h.Work.Key)
		c.queue.add(h.Work.Key, t)
	}
	for _, w := range e.Apply { // not to persist: none today
		if t, ok := then[w.Key]; ok {
			c.queue.add(w.Key, t)
		}
	}
	for _, d := range e.Delete {
		if t, ok := then[d.Work.Key]; ok {
			c.queue.add(d.Work.Key, t)
		}
	}
	c.post(e.Send...)
}

// unsaved reports that w could not be written to the state: it is not
// applied, and the hub hears FAILED, never an ack of what the agent could
// lose on a restart. mu is held.
func (c *Client) unsaved(w state.Work, err error) {
	c.log.Error("work not saved to the agent's state; not applied, acknowledged as failed, saved again with backoff",
		"work", w.Key, "version", w.Version, "error", err)
	c.post(c.books.Result(&agentv1.Ack{
		WorkKey: w.Key, Version: w.Version, Result: agentv1.ApplyResult_APPLY_RESULT_FAILED,
		Message: fmt.Sprintf("the agent could not save the work to its state: %v", err),
	})...)
}

// post queues msgs for the current stream. mu is held.
func (c *Client) post(msgs ...*agentv1.AgentMessage) {
	if len(msgs) == 0 {
		return
	}
	c.outbox = append(c.outbox, msgs...)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeState is the state writer: it writes the hub identity and the
// customizations when they change (saveSoon), and changed digests when
// digestPacer says so, outside the lock, until ctx ends.
func (c *Client) writeState(ctx context.Context) {
	t := time.NewTicker(digestFlushInterval)
	defer t.Stop()
	pace := digestPacer{max: digestMaxTicks}
	for {
		select {
		case <-t.C:
			c.mu.Lock()
			due := pace.due(c.books.DigestChanges())
			c.mu.Unlock()
			c.save(ctx, due)
		case <-c.saveWake:
			c.save(ctx, false)
		case <-ctx.Done():
			return
		}
	}
}

// saveSoon wakes the state writer. mu is held.
func (c *Client) saveSoon() {
	select {
	case c.saveWake <- struct{}{}:
	default:
	}
}

// save writes what the state writer holds, and the digests too when
// digests is set. What could not be written is kept for the next time,
// unless something newer replaced it.
func (c *Client) save(ctx context.Context, digests bool) {
	c.mu.Lock()
	u := c.unsavedState
	c.unsavedState = unsaved{}
	var d map[string]state.Digest
	if digests {
		d = c.books.TakeDigests()
	}
	c.mu.Unlock()
	if u.hub != nil {
		if err := c.cfg.Store.PutHub(ctx, u.hub.identity, u.hub.lineage); err != nil {
			c.log.Error("hub identity and store lineage not saved; the agent goes on with them in memory", "error", err)
			c.keepUnsaved(unsaved{hub: u.hub})
		}
	}
	if u.customizations != nil {
		if err := c.cfg.Store.PutCustomizations(ctx, u.customizations); err != nil {
			c.log.Error("customizations not saved to the agent's state; they apply until the agent restarts", "version", u.customizations.GetVersion(), "error", err)
			c.keepUnsaved(unsaved{customizations: u.customizations})
		}
	}
	if d != nil {
		if err := c.cfg.Store.PutDigests(ctx, d); err != nil {
			c.log.Warn("status digests not saved; the hub will ask for statuses again", "error", err)
		}
	}
}

// keepUnsaved puts back what save could not write, unless newer is there.
func (c *Client) keepUnsaved(u unsaved) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unsavedState.hub == nil {
		c.unsavedState.hub = u.hub
	}
	if c.unsavedState.customizations == nil {
		c.unsavedState.customizations = u.customizations
	}
}
