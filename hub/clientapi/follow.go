package clientapi

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/tetherproj/tether/hub/roles"
)

// follow keeps an open stream's caller current with the stored roles
// (Config.Roles): the returned context ends, with the refusal as its
// cause, as soon as check refuses the caller's new grant, and current
// returns the caller as last read, which the stream decides each object
// it sends with. stop ends the follower and waits for it. Without stored
// roles the caller never changes.
func (b *backend) follow(ctx context.Context, c caller, check func(caller) error) (_ context.Context, current func() caller, stop func()) {
	if b.cfg.Roles == nil {
		return ctx, func() caller { return c }, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	var cur atomic.Pointer[caller]
	cur.Store(&c)
	done := make(chan struct{})
	go func() {
		defer close(done)
		followGrant(ctx, b, c, &cur, check, cancel)
	}()
	return ctx, func() caller { return *cur.Load() }, func() { cancel(nil); <-done }
}

// followGrant reads c's grant again at every change of the roles until
// ctx ends, and cancels ctx with check's refusal once it refuses. A read
// that fails (the store, before the roles are loaded) is tried again at
// the next change.
func followGrant(ctx context.Context, b *backend, c caller, cur *atomic.Pointer[caller], check func(caller) error, cancel context.CancelCauseFunc) {
	for {
		changed := b.cfg.Roles.Changed()
		if next, err := b.callerOf(ctx, c.id); err == nil {
			cur.Store(&next)
			if err := check(next); err != nil {
				cancel(err)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// refusedCause is the refusal that ended ctx (follow's), or err.
func refusedCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrPermissionDenied) {
		return cause
	}
	return err
}

// mayRead is the check of a stream that reads objects of kind in
// namespace ns ("" for every namespace the caller may read, or a
// cluster-scoped kind when clusterScoped): what its method needs, and the
// namespace or kind it asked for.
func mayRead(kind, ns string, clusterScoped bool) func(caller) error {
	return func(c caller) error {
		if err := c.may(roles.Read, objectsKind, roles.AnyNamespace); err != nil {
			return err
		}
		if ns != "" || clusterScoped {
			return c.may(roles.Read, kind, ns)
		}
		return nil
	}
}
