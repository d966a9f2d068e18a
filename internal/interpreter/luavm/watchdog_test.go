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
