package aggregate

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/store"
)

// relayListPage is how many relayed records one list request reads, so
// that no response grows with the fleet: typically a few hundred KiB, at
// most 64 MiB (records stay under about 256 KiB).
const relayListPage = 256

// errReportsWatchClosed ends a session whose watch closed without error.
var errReportsWatchClosed = errors.New("aggregate: relayed reports watch closed")

// followReports is one session of Relay's follower: it lists the relayed
// records into memory, then applies their changes until the watch fails
// or ctx ends.
func (a *Aggregator) followReports(ctx context.Context) error {
	rev, err := a.listReports(ctx)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	events := a.relay.Watch(wctx, store.ReportsPrefix, rev+1)
	defer func() {
		cancel()
		for range events {
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return errReportsWatchClosed
			}
			if ev.Err != nil {
				return ev.Err
			}
			a.applyReport(ev)
		}
	}
}

// applyReport holds or forgets one changed record.
func (a *Aggregator) applyReport(ev store.Event) {
	cluster, key, ok := store.ParseReportKey(ev.KV.Key)
	if !ok {
		return
	}
	if ev.Type == store.EventDelete {
		a.forget(cluster, key, ev.KV.Revision)
		return
	}
	h, err := decodeHeld(ev.KV.Value)
	if err != nil {
		a.cfg.Counts.Add("aggregate", guard.KindDecode)
		a.log.Warn("relayed report not decodable, ignored", "key", ev.KV.Key, "error", err)
		return
	}
	a.hold(cluster, key, h, ev.KV.Revision)
}

// listReports reads every relayed record at one revision, relayListPage
// at a time, holds them, forgets the records held from before that it did
// not find (deleted while the watch was broken), and returns the revision.
func (a *Aggregator) listReports(ctx context.Context) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(store.ReportsPrefix)
	from, rev := store.ReportsPrefix, int64(0)
	listed := make(map[workRef]bool)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(relayListPage)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := a.relay.Client().Get(ctx, from, opts...)
		if err != nil {
			return 0, fmt.Errorf("list relayed reports from %s: %w", from, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if cluster, key, ok := store.ParseReportKey(string(kv.Key)); ok {
				listed[workRef{cluster, key}] = true
			}
			a.applyReport(store.Event{Type: store.EventPut, KV: store.KV{Key: string(kv.Key), Value: kv.Value,
				Revision: kv.ModRevision, CreateRevision: kv.CreateRevision}})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	a.forgetUnlisted(listed, rev)
	return rev, nil
}

// forgetUnlisted forgets the records held at or before rev that a list
// at rev did not find.
func (a *Aggregator) forgetUnlisted(listed map[workRef]bool, rev int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for cluster, keys := range a.records {
		for key := range keys {
			if ref := (workRef{cluster, key}); !listed[ref] {
				a.forgetLocked(ref, rev)
			}
		}
	}
}
