package store

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Follow runs session until ctx ends, then returns nil. A session lists
// what it needs and watches from the list's revision until its watch
// fails: after ErrCompacted, Follow starts a new session at once (it lists
// again); after any other error it waits backoff first, so an etcd outage
// is not hammered.
func Follow(ctx context.Context, log hclog.Logger, backoff time.Duration, session func(context.Context) error) error {
	for {
		err := session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrCompacted) {
			log.Info("watch revision compacted, listing again")
			continue
		}
		log.Warn("session ended, listing again", "error", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
	}
}
