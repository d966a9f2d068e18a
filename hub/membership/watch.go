package membership

import (
	"context"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/tetherproj/tether/hub/store"
)

// watchRetry is how soon a failed watch or listing of the agent records is
// tried again.
const watchRetry = time.Second

// Watch calls changed with the cluster name of every agent record that
// changes (registered, removed, approved) until ctx ends, then returns nil.
// After a watch error it lists every record and calls changed for each, so
// that nothing that changed meanwhile is missed. changed must not block
// long: it runs on Watch's goroutine.
func (r *Registry) Watch(ctx context.Context, changed func(cluster string)) error {
	log := r.log.Named("watch")
	var from int64
	for ctx.Err() == nil {
		if from == 0 {
			rev, err := r.listAgents(ctx, changed)
			if err != nil {
				log.Warn("list agent records, retrying", "error", err)
				sleep(ctx, watchRetry)
				continue
			}
			from = rev + 1
		}
		from = r.follow(ctx, from, changed, log)
	}
	return nil
}

// follow watches from rev and returns the revision to continue from, 0
// after an error (list again).
func (r *Registry) follow(ctx context.Context, rev int64, changed func(string), log hclog.Logger) int64 {
	for ev := range r.st.Watch(ctx, store.AgentsPrefix, rev) {
		if ev.Err != nil {
			log.Warn("agent record watch ended, listing again", "error", ev.Err)
			sleep(ctx, watchRetry)
			return 0
		}
		changed(strings.TrimPrefix(ev.KV.Key, store.AgentsPrefix))
		rev = ev.KV.Revision + 1
	}
	if ctx.Err() == nil {
		sleep(ctx, watchRetry)
		return 0
	}
	return rev
}

func (r *Registry) listAgents(ctx context.Context, changed func(string)) (int64, error) {
	kvs, rev, err := r.st.List(ctx, store.AgentsPrefix)
	if err != nil {
		return 0, err
	}
	for _, kv := range kvs {
		changed(strings.TrimPrefix(kv.Key, store.AgentsPrefix))
	}
	return rev, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
