package liveness

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"

	"github.com/tetherproj/tether/hub/store"
)

// relistBackoff is how long Follow waits before listing the liveness
// records again after its watch failed for another reason than compaction.
const relistBackoff = 2 * time.Second

// errWatchClosed ends a session whose watch closed without an error.
var errWatchClosed = errors.New("liveness: watch closed")

// Follow feeds l from the liveness records every replica's Publisher
// writes, until ctx ends (nil). Each record written is a heartbeat at the
// time l sees it, except those of the replica whose Publisher renews l
// directly (PublisherConfig.Local), applied already. A record found by
// listing (at start, or after the watch was compacted or broken) renews
// the lease from when this replica first saw that revision of it, by its
// own clock: a revision seen before the list as of then (so one a lease
// duration old, or older than the heartbeat the lease holds, renews
// nothing), a new one as of now. Other replicas' clocks order nothing: a
// record's time (beat.At) is read only in this replica's own records. A
// record deleted (its replica stopped or died) only stops the renewals:
// the lease runs out in l by itself, with l's pause protection, and
// nothing is deleted because of it. While the watch is broken (etcd
// unreachable, this member cut off) and for one lease duration after it
// works again, no lease runs out in l: renewals were written that l could
// not see, as during a pause.
func Follow(ctx context.Context, st *store.Store, l *Leases, logger hclog.Logger) error {
	f := &follower{l: l, log: logger.Named("liveness")}
	blind := false // the last session failed: renewals may have been missed
	return store.Follow(ctx, f.log, relistBackoff, func(ctx context.Context) error {
		if blind {
			l.holdExpiry() // no lease runs out for want of renewals this replica could not see
		}
		blind = true
		rev, err := f.list(ctx, st)
		if err != nil {
			return err
		}
		events := st.Watch(ctx, store.LivenessPrefix, rev+1)
		blind = false
		for ev := range events {
			if ev.Err != nil {
				blind = true
				l.holdExpiry()
				return ev.Err
			}
			f.apply(ev, false)
		}
		if ctx.Err() != nil {
			return nil
		}
		blind = true
		l.holdExpiry()
		return errWatchClosed
	})
}

// follower is Follow's state: the last heartbeat of each cluster, which
// the renewals refer to by digest, and the renewal last seen of each.
type follower struct {
	l        *Leases
	log      hclog.Logger
	contents map[string]followed // by cluster
	// renewals is the renewal record last seen of each cluster, kept
	// across lists: its revision and when this replica first saw it.
	renewals map[string]seenRenewal
}

// seenRenewal is a cluster's renewal record as Follow last saw it.
type seenRenewal struct {
	rev int64     // its etcd ModRevision
	at  time.Time // when this replica first saw that revision, by its clock
}

type followed struct {
	hb     *agentv1.Heartbeat
	digest string
}

// list reads every record, heartbeats before the renewals that name them,
// and returns the revision read at.
func (f *follower) list(ctx context.Context, st *store.Store) (int64, error) {
	kvs, rev, err := st.List(ctx, store.LivenessPrefix)
	if err != nil {
		return 0, err
	}
	f.contents = make(map[string]followed, len(kvs)/2)
	listed := make(map[string]bool, len(kvs)/2)
	for _, heartbeats := range []bool{true, false} {
		for _, kv := range kvs {
			if cluster, hb, ok := store.ParseLivenessKey(kv.Key); ok && hb == heartbeats {
				listed[cluster] = true
				f.apply(store.Event{Type: store.EventPut, KV: kv}, true)
			}
		}
	}
	for cluster := range f.renewals {
		if !listed[cluster] {
			delete(f.renewals, cluster) // deleted while the watch was lost
		}
	}
	return rev, nil
}

// firstSeen returns when this replica first saw revision rev of cluster's
// renewal record, by its own clock: now, when the revision is new to it.
// ok is false for a revision older than the one seen last (never, as
// etcd's revisions only grow).
func (f *follower) firstSeen(cluster string, rev int64) (at time.Time, ok bool) {
	if f.renewals == nil {
		f.renewals = make(map[string]seenRenewal)
	}
	last, known := f.renewals[cluster]
	switch {
	case known && rev == last.rev:
		return last.at, true
	case known && rev < last.rev:
		return time.Time{}, false
	}
	now := f.l.clock.Now()
	f.renewals[cluster] = seenRenewal{rev: rev, at: now}
	return now, true
}

// apply feeds one record to the leases; listed says whether the renewal's
// age counts (see Follow). A heartbeat record is remembered and renews the lease only
// through a renewal naming it (written in the same transaction, after it).
func (f *follower) apply(ev store.Event, listed bool) {
	cluster, isHB, ok := store.ParseLivenessKey(ev.KV.Key)
	if !ok {
		return
	}
	if isHB {
		if ev.Type == store.EventDelete {
			delete(f.contents, cluster)
			return
		}
		hb, digest, err := decodeContent(ev.KV.Value)
		if err != nil {
			f.log.Warn("skip heartbeat record", "key", ev.KV.Key, "error", err)
			return
		}
		f.contents[cluster] = followed{hb: hb, digest: digest}
		return
	}
	if ev.Type == store.EventDelete {
		delete(f.renewals, cluster)
		return // a renewal going away only stops the renewals
	}
	b, err := decodeBeat(ev.KV.Value)
	if err != nil {
		f.log.Warn("skip liveness renewal", "key", ev.KV.Key, "error", err)
		return
	}
	c, ok := f.contents[cluster]
	if !ok || c.digest != b.Digest {
		f.log.Debug("liveness renewal of a heartbeat not seen", "cluster", cluster)
		return
	}
	at, ok := f.firstSeen(cluster, ev.KV.Revision)
	own := f.l.ownRecord(b.Replica)
	switch {
	case !ok:
		return // older than the renewal seen last
	case !listed && own:
		return // applied when its heartbeat was received; the lease may hold a newer one
	case !listed:
		f.l.Heartbeat(cluster, c.hb)
	case own:
		// Its time is by this replica's clock: the heartbeat's, not the
		// (later) read's, orders it before the heartbeats received since.
		f.l.heartbeatAt(cluster, c.hb, earliest(at, time.UnixMilli(b.At)))
	default:
		f.l.heartbeatAt(cluster, c.hb, at)
	}
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
