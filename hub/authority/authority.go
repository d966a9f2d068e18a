package authority

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/store"
)

// PersistInterval is how often Run raises the recorded revision and the
// checkpoint (one small etcd write and one file write each time). A
// restore to a snapshot taken within the last interval is not detected by
// them: it loses at most that much.
const PersistInterval = 30 * time.Second

// Store is what the authority reads and writes; *store.Store satisfies it.
type Store interface {
	Epoch(ctx context.Context) (string, bool, error)
	Revision(ctx context.Context) (int64, error)
	Get(ctx context.Context, key string) (store.KV, error)
	Put(ctx context.Context, key string, value []byte) (int64, error)
}

// Authority is the hub's answer to "may I cause deletes?". Its methods are
// safe for concurrent use.
type Authority struct {
	st       Store
	dir      string
	log      hclog.Logger
	accepted bool // the operator accepted the store at this start
	alone    bool // Options.Alone
	// started is the store's revision when Check read it, before this
	// hub wrote anything.
	started int64
	// seen is the highest store revision read since.
	seen atomic.Int64

	// fileMu orders the writes of the record, so that a persist racing a
	// revoke never writes an authoritative record after it.
	fileMu sync.Mutex
	mu     sync.Mutex // guards rec and reason
	rec    Record
	reason string // why not authoritative; "" when it is
	// epoch is the store's epoch; adoption the latest adoption (nil:
	// none); hellos the clusters whose Hello was observed since start.
	epoch    string
	adoption *Adoption
	hellos   map[string]bool
}

// Options are the operator's choices at start.
type Options struct {
	// Adopt is what the operator adopts at this start (--accept-store-reset,
	// --adopt-identity, --adopt-delete-unknown).
	Adopt Adopt
	// Identity is the hub's identity, always among an adoption's.
	Identity string
	// Alone is true for a hub on its embedded etcd, the only replica
	// there can be: an agent's first Hello since start cannot have seen
	// a store revision newer than the store had at start.
	Alone bool
}

// Check compares the store with the record in dir (the CA directory) and
// returns the hub's authority, writing the record. With opts.Adopt the
// operator accepts the store as it is: it becomes the new baseline, and an
// adoption is recorded in the store for the agents. It fails only when
// the store or the directory cannot be read or written, or when the
// record is unreadable and not accepted.
func Check(ctx context.Context, st Store, dir string, opts Options, logger hclog.Logger) (*Authority, error) {
	accept := opts.Adopt.wanted()
	a := &Authority{st: st, dir: dir, log: logger.Named("authority"), accepted: accept, alone: opts.Alone, hellos: map[string]bool{}}
	rec, err := readRecord(dir)
	if err != nil && !accept {
		return nil, fmt.Errorf("%w; if the store is the right one, start once with --accept-store-reset", err)
	}
	obs, err := a.observe(ctx, rec)
	if err != nil {
		return nil, err
	}
	a.started, a.epoch = obs.Revision, obs.Epoch
	a.seen.Store(obs.Revision)
	if err := a.adopt(ctx, opts, obs.Revision); err != nil {
		return nil, err
	}
	reason := Decide(rec, obs.Observed)
	a.rec = Record{Replica: obs.replica, Epoch: obs.Epoch, Revision: obs.Revision, Checkpoint: obs.Checkpoint}
	switch {
	case accept:
		a.log.Warn("store accepted by the operator: it is the new baseline", "epoch", obs.Epoch,
			"revision", obs.Revision, "previous_state", nonEmpty(reason, "authoritative"))
	case reason != "":
		a.rec = *rec
		return a, a.revoke(reason)
	case rec != nil:
		a.rec.Revision, a.rec.Checkpoint = max(rec.Revision, obs.Revision), max(rec.Checkpoint, obs.Checkpoint)
	}
	return a, a.persist(ctx)
}

// adopt records the adoption opts asks for, or reads the stored one.
func (a *Authority) adopt(ctx context.Context, opts Options, rev int64) error {
	if !opts.Adopt.wanted() {
		return a.refreshAdoption(ctx)
	}
	ad, err := recordAdoption(ctx, a.st, opts.Identity, opts.Adopt, rev)
	if err != nil {
		return err
	}
	a.adoption = ad
	a.log.Warn("fleet adopted by the operator: agents whose works came from these hub identities trust this store again",
		"adoption", ad.ID, "identities", ad.Identities, "delete_unknown", ad.DeleteUnknown)
	return nil
}

// observed is Observed plus the replica id it was read for.
type observed struct {
	Observed
	replica string
}

func (a *Authority) observe(ctx context.Context, rec *Record) (observed, error) {
	obs := observed{replica: newReplicaID()}
	if rec != nil && rec.Replica != "" {
		obs.replica = rec.Replica
	}
	var err error
	if obs.Epoch, obs.Created, err = a.st.Epoch(ctx); err != nil {
		return obs, fmt.Errorf("read store epoch: %w", err)
	}
	if obs.Revision, err = a.st.Revision(ctx); err != nil {
		return obs, fmt.Errorf("read store revision: %w", err)
	}
	if obs.Checkpoint, err = a.checkpoint(ctx, obs.replica); err != nil {
		return obs, err
	}
	return obs, nil
}

// checkpoint reads replica's counter in the store; 0 when absent.
func (a *Authority) checkpoint(ctx context.Context, replica string) (int64, error) {
	kv, err := a.st.Get(ctx, store.CheckpointKey(replica))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read store checkpoint: %w", err)
	}
	n, err := strconv.ParseInt(string(kv.Value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("decode store checkpoint %s: %w", kv.Key, err)
	}
	return n, nil
}

// Authoritative reports whether the hub may cause deletes, and if not why.
func (a *Authority) Authoritative() (bool, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reason == "", a.reason
}

// Run checks the store again (Verify) and raises the recorded revision and
// checkpoint every PersistInterval while the hub is authoritative, until
// ctx ends; it returns nil. Failures are logged and retried at the next
// tick.
func (a *Authority) Run(ctx context.Context) error {
	tick := time.NewTicker(PersistInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			err := a.Verify(ctx)
			if err == nil {
				err = a.persist(ctx)
			}
			if err == nil {
				err = a.refreshAdoption(ctx)
			}
			if err != nil && ctx.Err() == nil {
				a.log.Warn("store not checked, retrying", "error", err)
			}
		}
	}
}

// Verify compares the store with the record again, as at start: a store
// replaced or restored under a running hub (an external etcd) makes it not
// authoritative. The renderer calls it before it publishes a new list of
// the store, so that such a store's smaller contents remove nothing.
func (a *Authority) Verify(ctx context.Context) error {
	if ok, _ := a.Authoritative(); !ok {
		return nil
	}
	a.mu.Lock()
	rec := a.rec
	a.mu.Unlock()
	obs, err := a.observe(ctx, &rec)
	if err != nil {
		return err
	}
	if reason := Decide(&rec, obs.Observed); reason != "" {
		return a.revoke(reason)
	}
	return nil
}

// persist writes the next checkpoint to the store, then the record with
// it and the store's revision; nothing while not authoritative.
func (a *Authority) persist(ctx context.Context) error {
	a.fileMu.Lock()
	defer a.fileMu.Unlock()
	if ok, _ := a.Authoritative(); !ok {
		return nil
	}
	rev, err := a.st.Revision(ctx)
	if err != nil {
		return fmt.Errorf("read store revision: %w", err)
	}
	a.mu.Lock()
	next := a.rec
	a.mu.Unlock()
	next.Checkpoint++
	next.Revision = max(next.Revision, rev)
	next.Updated = time.Now().UTC()
	if _, err := a.st.Put(ctx, store.CheckpointKey(next.Replica), []byte(strconv.FormatInt(next.Checkpoint, 10))); err != nil {
		return fmt.Errorf("write store checkpoint: %w", err)
	}
	// The store is ahead of the record until the file is written: a
	// crash in between leaves a higher checkpoint in the store, which is
	// never taken for a regression.
	if ok, _ := a.Authoritative(); !ok {
		return nil // revoked meanwhile; revoke writes the record
	}
	if err := writeRecord(a.dir, next); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reason == "" {
		a.rec = next
	}
	return nil
}

// revoke makes the hub not authoritative for reason, logs it and records
// it, so that a restart keeps it until an operator accepts the store.
func (a *Authority) revoke(reason string) error {
	a.mu.Lock()
	if a.reason != "" {
		a.mu.Unlock()
		return nil
	}
	a.reason = reason
	rec := a.rec
	if rec.NotAuthoritative == "" {
		rec.NotAuthoritative, rec.Updated = reason, time.Now().UTC()
	}
	a.rec = rec
	a.mu.Unlock()
	a.log.Error("the hub is NOT AUTHORITATIVE: it serves reads and agent streams but causes no delete in any member "+
		"until an operator checks the store and restarts the hub once with --accept-store-reset (or --adopt-identity)",
		"reason", reason, "record", a.dir+"/"+FileName)
	a.fileMu.Lock()
	defer a.fileMu.Unlock()
	return writeRecord(a.dir, rec)
}

// ObserveAgent checks one agent's Hello against the store, and makes the
// hub not authoritative when it shows that the store lost data: the agent
// saw a store revision the store has not reached (behind), or it holds
// works (so a hub of this CA gave it some) for a cluster the store has
// neither a cluster nor an agent record of. Not checked after the
// operator accepted the store at this start. Store failures are logged
// and ignored (the check is repeated at the next connection).
func (a *Authority) ObserveAgent(ctx context.Context, l Lineage) {
	if a.accepted {
		return
	}
	if ok, _ := a.Authoritative(); !ok {
		return
	}
	reason, err := a.lost(ctx, l)
	if err != nil {
		a.log.Warn("agent's Hello not checked against the store", "cluster", l.Cluster, "error", err)
		return
	}
	if reason == "" {
		return
	}
	if err := a.revoke(reason); err != nil {
		a.log.Error("not-authoritative state not recorded", "error", err)
	}
}

// lost returns why l shows that the store lost data; "" when it does not.
func (a *Authority) lost(ctx context.Context, l Lineage) (string, error) {
	if reason, err := a.behind(ctx, l); reason != "" || err != nil {
		return reason, err
	}
	if l.HeldWorks == 0 {
		return "", nil
	}
	known, err := a.known(ctx, l.Cluster)
	if err != nil || known {
		return "", err
	}
	return fmt.Sprintf("the agent of cluster %q holds %d works from a hub of this CA, but the store has no record of the cluster: the store lost data", l.Cluster, l.HeldWorks), nil
}

// known reports whether the store has a cluster or an agent record of
// cluster.
func (a *Authority) known(ctx context.Context, cluster string) (bool, error) {
	for _, key := range []string{store.ClusterKey(cluster), store.AgentKey(cluster)} {
		_, err := a.st.Get(ctx, key)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
	}
	return false, nil
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
