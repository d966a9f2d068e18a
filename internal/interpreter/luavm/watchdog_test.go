package luavm

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// blocker is a VM whose scripts can call block(), a Go function that does
// not return until release is closed: a library call stuck where no budget
// reaches. entered receives a value each time a call gets inside.
type blocker struct {
	vm      *VM
	inside  atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func newBlocker() *blocker {
	limits := DefaultLimits()
	limits.Timeout = 10 * time.Minute // the test's cancellation is the deadline
	b := &blocker{vm: New(Options{Limits: limits}), entered: make(chan struct{}, maxStuckCalls+1), release: make(chan struct{})}
	b.vm.testGlobals = map[string]lua.LGFunction{"block": func(L *lua.LState) int {
		b.inside.Add(1)
		defer b.inside.Add(-1)
		b.entered <- struct{}{}
		<-b.release
		return 0
	}}
	return b
}

// abandon runs a script that blocks, waits until it is inside block(),
// then ends the caller's context, and returns the caller's error.
func (b *blocker) abandon() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := b.vm.ReflectStatus(ctx, probe(), "function ReflectStatus(o) block() return {} end")
		errc <- err
	}()
	<-b.entered
	cancel()
	return <-errc
}

// waitUnstuck polls until every abandoned call has returned.
func (b *blocker) waitUnstuck(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for b.vm.StuckCalls() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("StuckCalls() = %d 30s after release; want 0", b.vm.StuckCalls())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStuckCallAbandoned: a call stuck inside a Go function returns to its
// caller with the abandonment error while the function is still blocked;
// once the function returns, the abandoned call is no longer counted.
func TestStuckCallAbandoned(t *testing.T) {
	b := newBlocker()
	err := b.abandon()
	if err == nil || !strings.Contains(err.Error(), "lua: call abandoned") || !IsBudgetError(err) {
		t.Fatalf("ReflectStatus(stuck) error = %v; want the abandonment error, a budget error", err)
	}
	if n := b.inside.Load(); n != 1 {
		t.Fatalf("goroutines inside block() after the caller returned = %d; want 1 (still stuck)", n)
	}
	if n := b.vm.StuckCalls(); n != 1 {
		t.Fatalf("StuckCalls() = %d; want 1", n)
	}
	close(b.release)
	b.waitUnstuck(t)
	if status, err := b.vm.ReflectStatus(context.Background(), probe(), normalScript); err != nil || string(status.Raw) != `{"replicas":3}` {
		t.Fatalf("normal call after an abandoned one = %s, %v", status.Raw, err)
	}
}

// TestTooManyStuckCalls: while maxStuckCalls abandoned calls still run, a
// new call is refused at once rather than adding another.
func TestTooManyStuckCalls(t *testing.T) {
	b := newBlocker()
	defer b.waitUnstuck(t)
	defer close(b.release)
	for i := 0; i < maxStuckCalls; i++ {
		if err := b.abandon(); err == nil || !strings.Contains(err.Error(), "lua: call abandoned") {
			t.Fatalf("call %d: error = %v; want abandoned", i, err)
		}
	}
	_, err := b.vm.InterpretHealth(context.Background(), probe(), "function InterpretHealth(o) return true end")
	if err == nil || !strings.Contains(err.Error(), "8 earlier calls are still stuck") {
		t.Fatalf("InterpretHealth with %d stuck calls error = %v; want the refusal", maxStuckCalls, err)
	}
}

// TestConcurrencyBound: with Options.Concurrency 2, two calls holding
// their slots and four more at once never have more than two inside a
// script; the four find no slot before their deadline and fail with a
// budget error saying so, having run nothing; once the two return, a call
// runs again.
func TestConcurrencyBound(t *testing.T) {
	const bound, more = 2, 4
	limits := DefaultLimits()
	limits.Timeout = 10 * time.Minute // the callers' contexts are the deadlines
	vm := New(Options{Limits: limits, Concurrency: bound})
	if vm.Concurrency() != bound {
		t.Fatalf("Concurrency() = %d; want %d", vm.Concurrency(), bound)
	}
	var inside, most atomic.Int64
	entered, release := make(chan struct{}, bound+more), make(chan struct{})
	vm.testGlobals = map[string]lua.LGFunction{"hold": func(L *lua.LState) int {
		n := inside.Add(1)
		defer inside.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		entered <- struct{}{}
		select {
		case <-release:
		case <-L.Context().Done():
		}
		return 0
	}}
	const script = "function ReflectStatus(o) hold() return {} end"
	call := func(ctx context.Context, errs chan<- error) {
		_, err := vm.ReflectStatus(ctx, probe(), script)
		errs <- err
	}
	held := make(chan error, bound)
	for range bound {
		go call(context.Background(), held)
	}
	for range bound {
		<-entered
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	refused := make(chan error, more)
	for range more {
		go call(ctx, refused)
	}
	for range more {
		if err := <-refused; err == nil || !IsBudgetError(err) || !strings.Contains(err.Error(), "lua: no call slot free: all 2 call slots") {
			t.Errorf("ReflectStatus with both slots held = %v; want the budget error saying no slot was free", err)
		}
	}
	if m := most.Load(); m > bound {
		t.Errorf("calls inside a script at once = %d; want at most %d", m, bound)
	}
	close(release)
	for range bound {
		if err := <-held; err != nil {
			t.Errorf("ReflectStatus holding a slot = %v; want nil once released", err)
		}
	}
	if _, err := vm.ReflectStatus(context.Background(), probe(), "function ReflectStatus(o) return {} end"); err != nil {
		t.Errorf("a call after the others returned = %v; want nil: their slots are free again", err)
	}
}
