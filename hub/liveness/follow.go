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
// directly (PublisherConfig.Local), applied already; a record found by
// listing (at start, or after the watch was compacted) renews the lease
// from when its publisher received it, and one older than the lease
// duration, or than the heartbeat the lease holds, renews nothing. A record
// deleted (its replica stopped or died) only stops the renewals: the lease
// runs out in l by itself, with l's pause protection, and nothing is
// deleted because of it. While the watch is broken (etcd unreachable, this
// member cut off) and for one lease duration after it works again, no
// lease runs out in l: renewals were written that l could not see, as
// during a pause.
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
// the renewals refer to by digest.
type follower struct {
	l        *Leases
	log      hclog.Logger
	contents map[string]followed // by cluster
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
	for _, heartbeats := range []bool{true, false} {
		for _, kv := range kvs {
			if _, hb, ok := store.ParseLivenessKey(kv.Key); ok && hb == heartbeats {
				f.apply(store.Event{Type: store.EventPut, KV: kv}, true)
			}
		}
	}
	return rev, nil
}

// apply feeds one record to the leases; listed says whether the renewal's
// age counts. A heartbeat record is remembered and renews the lease only
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
	if listed {
		f.l.heartbeatAt(cluster, c.hb, time.UnixMilli(b.At))
		return
	}
	if f.l.ownRecord(b.Replica) {
		return // applied when its heartbeat was received; the lease may hold a newer one
	}
	f.l.Heartbeat(cluster, c.hb)
}
