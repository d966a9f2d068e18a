package proc

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// permanent marks an error that ends a poll at once.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as one that ends Poll at once (a process died), rather
// than meaning "not yet".
func Permanent(err error) error { return permanent{err} }

// Poll calls cond every interval until it returns nil. An error wrapped by
// Permanent ends the poll with that error; any other error means "not yet"
// and, if ctx ends first, is quoted in the returned error as the last reason.
func Poll(ctx context.Context, interval time.Duration, cond func(context.Context) error) error {
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
