package aggregate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// removal is the part of an agent record (hub/membership, store.AgentKey)
// Prune reads: set once the cluster was removed.
type removal struct {
	Removed *json.RawMessage `json:"removed,omitempty"`
}

// Prune deletes the relayed records of removed clusters (their agent
// record is a tombstone, hub/membership), through the store given to New, so
// only the leader's deletions go through; with Config.Local it forgets
// them from memory. It checks every record when it
// starts, then each agent record and relayed record that changes, until
// ctx ends (nil). Leader only, next to Run.
func (a *Aggregator) Prune(ctx context.Context) error {
	return store.Follow(ctx, a.log.Named("prune"), view.RelistBackoff, a.pruneSession)
}

// pruneSession lists agents and records, deletes what is due, and follows
// both prefixes until a watch fails.
func (a *Aggregator) pruneSession(ctx context.Context) error {
	agents, rev, err := a.store.List(ctx, store.AgentsPrefix)
	if err != nil {
		return err
	}
	removed := make(map[string]bool)
	for _, kv := range agents {
		noteRemoval(removed, kv, false)
	}
	for cluster := range removed {
		if err := a.pruneCluster(ctx, cluster); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	agentEvents := a.store.Watch(wctx, store.AgentsPrefix, rev+1)
	reportEvents := a.store.Watch(wctx, store.ReportsPrefix, rev+1)
	defer func() {
		cancel()
		for range agentEvents {
		}
		for range reportEvents {
		}
	}()
	for {
		var ev store.Event
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok = <-agentEvents:
		case ev, ok = <-reportEvents:
		}
		if !ok {
			return errReportsWatchClosed
		}
		if ev.Err != nil {
			return ev.Err
		}
		if err := a.pruneEvent(ctx, removed, ev); err != nil {
			return err
		}
	}
}

// pruneEvent acts on one change: a cluster just removed loses its
// records; a record written for a removed cluster (a replica relaying
// late) is deleted.
func (a *Aggregator) pruneEvent(ctx context.Context, removed map[string]bool, ev store.Event) error {
	if strings.HasPrefix(ev.KV.Key, store.AgentsPrefix) {
		cluster, now := noteRemoval(removed, ev.KV, ev.Type == store.EventDelete)
		if now {
			return a.pruneCluster(ctx, cluster)
		}
		return nil
	}
	cluster, _, ok := store.ParseReportKey(ev.KV.Key)
	if !ok || ev.Type == store.EventDelete || !removed[cluster] {
		return nil
	}
	return a.pruneKey(ctx, ev.KV.Key, ev.KV.Revision)
}

// noteRemoval updates removed from an agent record; now says the cluster
// was not known removed before.
func noteRemoval(removed map[string]bool, kv store.KV, deleted bool) (cluster string, now bool) {
	cluster = strings.TrimPrefix(kv.Key, store.AgentsPrefix)
	var r removal
	if deleted || json.Unmarshal(kv.Value, &r) != nil || r.Removed == nil {
		delete(removed, cluster)
		return cluster, false
	}
	now = !removed[cluster]
	removed[cluster] = true
	return cluster, now
}

// pruneCluster deletes every relayed record of a removed cluster; with
// Config.Local it forgets what memory holds for it.
func (a *Aggregator) pruneCluster(ctx context.Context, cluster string) error {
	if a.cfg.Local {
		if n := a.forgetCluster(cluster); n > 0 {
			a.log.Info("reports of a removed cluster forgotten", "cluster", cluster, "works", n)
		}
		return nil
	}
	kvs, _, err := a.store.List(ctx, store.ReportsOf(cluster))
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		if err := a.pruneKey(ctx, kv.Key, kv.Revision); err != nil {
			return err
		}
	}
	if len(kvs) > 0 {
		a.log.Info("relayed reports of a removed cluster deleted", "cluster", cluster, "records", len(kvs))
	}
	return nil
}

// pruneKey deletes one record if it is still at rev; a record changed
// since is left to its own event.
func (a *Aggregator) pruneKey(ctx context.Context, key string, rev int64) error {
	_, err := a.store.Delete(ctx, key, rev)
	if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return nil
	}
	return fmt.Errorf("delete relayed report %s: %w", key, err)
}
