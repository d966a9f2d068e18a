package clusters

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/store"
)

// relistBackoff is how long Follow waits before listing the liveness
// records again after its watch failed for another reason than compaction.
const relistBackoff = 2 * time.Second

// errWatchClosed ends a session whose watch closed without an error.
var errWatchClosed = errors.New("clusters: liveness watch closed")

// Follow feeds l from the liveness records every replica's Publisher
// writes, until ctx ends (nil). Each record written is a heartbeat at the
// time l sees it; a record found by listing (at start, or after the
// watch was compacted) renews the lease from when its publisher received
// it, and one older than the lease duration renews nothing. A record
// deleted (its replica stopped or died) only stops the renewals: the lease
// runs out in l by itself, with l's pause protection, and nothing is
// deleted because of it. While the watch is broken (etcd unreachable, this
// member cut off) and for one lease duration after it works again, no
// lease runs out in l: renewals were written that l could not see, as
// during a pause.
func Follow(ctx context.Context, st *store.Store, l *Leases, logger hclog.Logger) error {
	log := logger.Named("liveness")
	blind := false // the last session failed: renewals may have been missed
	return store.Follow(ctx, log, relistBackoff, func(ctx context.Context) error {
		if blind {
			l.holdExpiry() // no lease runs out for want of renewals this replica could not see
		}
		blind = true
		kvs, rev, err := st.List(ctx, store.LivenessPrefix)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			l.apply(log, kv, true)
		}
		events := st.Watch(ctx, store.LivenessPrefix, rev+1)
		blind = false
		for ev := range events {
			if ev.Err != nil {
				blind = true
				l.holdExpiry()
				return ev.Err
			}
			if ev.Type == store.EventPut {
				l.apply(log, ev.KV, false)
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		blind = true
		l.holdExpiry()
		return errWatchClosed
	})
}

// apply feeds one record to l; listed says whether its age counts.
func (l *Leases) apply(log hclog.Logger, kv store.KV, listed bool) {
	cluster := strings.TrimPrefix(kv.Key, store.LivenessPrefix)
	at, hb, err := decodeRecord(kv.Value)
	if err != nil || cluster == "" {
		log.Warn("skip liveness record", "key", kv.Key, "error", err)
		return
	}
	if !listed {
		l.Heartbeat(cluster, hb)
		return
	}
	l.heartbeatAt(cluster, hb, at)
}
