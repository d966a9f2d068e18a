package kit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Poll intervals while waiting for the kit's own start-up conditions. They
// are short because every one of them sits on the start-up critical path and
// each check is a single cheap request to a local process.
const (
	pollFast = 50 * time.Millisecond  // etcd /health, API server /readyz
	pollAPI  = 100 * time.Millisecond // objects read through the API
)

// permanent marks an error that ends a poll at once (a process died).
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

func stopPolling(err error) error { return permanent{err} }

// poll calls cond every interval until it returns nil. An error wrapped by
// stopPolling ends the poll with that error; any other error means "not yet"
// and, if ctx ends first, is quoted in the returned error as the last reason.
func poll(ctx context.Context, interval time.Duration, cond func(context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		err := cond(ctx)
		if err == nil {
			return nil
		}
		var p permanent
		if errors.As(err, &p) {
			return p.err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", context.Cause(ctx), err)
		case <-t.C:
		}
	}
}
