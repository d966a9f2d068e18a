package aggregate

import (
	"context"
	"errors"

	"github.com/tetherproj/tether/hub/guard"
	"github.com/tetherproj/tether/hub/store"
)

// errReportsWatchClosed ends a session whose watch closed without error.
var errReportsWatchClosed = errors.New("aggregate: relayed reports watch closed")

// followReports is one session of Relay's follower: it lists the relayed
// records into memory, then applies their changes until the watch fails
// or ctx ends.
func (a *Aggregator) followReports(ctx context.Context) error {
	kvs, rev, err := a.relay.List(ctx, store.ReportsPrefix)
	if err != nil {
		return err
	}
	a.replaceHeld(kvs, rev)
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

// replaceHeld makes memory what a list read at rev found: listed records
// are held, and records held from before the list that it did not find
// are forgotten (deleted while the watch was broken).
func (a *Aggregator) replaceHeld(kvs []store.KV, rev int64) {
	listed := make(map[workRef]bool, len(kvs))
	for _, kv := range kvs {
		if cluster, key, ok := store.ParseReportKey(kv.Key); ok {
			listed[workRef{cluster, key}] = true
		}
		a.applyReport(store.Event{Type: store.EventPut, KV: kv})
	}
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
