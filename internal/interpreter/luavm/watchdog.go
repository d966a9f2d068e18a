package luavm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The watchdog. The budget stops a script at its next VM instruction or
// matcher step, but a Go function that never returns (a library bug, a
// path this package failed to meter) would hold its caller — the
// renderer's or the aggregator's single loop, or a client's Simulate —
// for ever. So every call runs on a worker goroutine (guard, workers) and the
// caller waits for it until the call's deadline plus abandonGrace. Past
// that the call is abandoned: the caller gets an error that
// IsBudgetError recognises (the customization fails like one that ran out
// of time), the goroutine is left to finish, and its state, used by no one
// else, is closed when it does; it is never reused. Abandoned calls still
// running are counted (VM.StuckCalls); while maxStuckCalls of them run, new
// calls are refused instead of piling up more stuck goroutines.

const (
	// abandonGrace is how long past its deadline a call may take to stop by
	// itself (the budget's error at its next instruction) before its caller
	// gives up on it.
	abandonGrace = 100 * time.Millisecond
	// maxStuckCalls is how many abandoned calls may still be running before
	// new calls are refused.
	maxStuckCalls = 8
)

// A call's goroutine and its caller agree on who had the last word.
const (
	callRunning int32 = iota
	callFinished
	callAbandoned
)

// errAbandoned is the prefix of the error of an abandoned call.
const errAbandoned = "lua: call abandoned"

// errNoSlot is the prefix of the error of a call that found no free slot
// (Options.Concurrency) before its deadline.
const errNoSlot = "lua: no call slot free"

type outcome[T any] struct {
	v   T
	err error
}

// guard runs body in a fresh call with the VM's timeout, on a goroutine
// of its own, and returns its result, or an error once the deadline (or
// ctx) has passed by abandonGrace while body still runs.
func guard[T any](ctx context.Context, vm *VM, body func(c *call) (T, error)) (T, error) {
	var zero T
	if n := vm.stuck.Load(); n >= maxStuckCalls {
		return zero, fmt.Errorf("%s: %d earlier calls are still stuck in library functions past their deadline; no new call starts until they return", errAbandoned, n)
	}
	ctx, cancel := context.WithTimeout(ctx, vm.limits.Timeout)
	defer cancel()
	if err := vm.acquire(ctx); err != nil {
		return zero, err
	}
	var state atomic.Int32
	done := make(chan outcome[T], 1)
	vm.workers.run(func() {
		v, err := runCall(ctx, vm, body)
		vm.release()
		done <- outcome[T]{v, err}
		if !state.CompareAndSwap(callRunning, callFinished) {
			vm.stuck.Add(-1)
		}
	})
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
	}
	grace := time.NewTimer(abandonGrace)
	defer grace.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-grace.C:
	}
	vm.stuck.Add(1)
	if !state.CompareAndSwap(callRunning, callAbandoned) {
		vm.stuck.Add(-1)
		r := <-done
		return r.v, r.err
	}
	return zero, &budgetError{msg: fmt.Sprintf("%s %s after its deadline (%v): a Go library function did not return; its state is discarded",
		errAbandoned, abandonGrace, ctx.Err())}
}

// acquire takes a call slot (Options.Concurrency), waiting at most until
// ctx, which carries the call's deadline, is done.
func (vm *VM) acquire(ctx context.Context) error {
	if vm.slots == nil {
		return nil
	}
	select {
	case vm.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &budgetError{msg: fmt.Sprintf("%s: all %d call slots stayed taken by other calls until this one's deadline (%v)",
			errNoSlot, cap(vm.slots), ctx.Err())}
	}
}

// release gives back the slot acquire took; the call's goroutine calls it
// when the call has returned, abandoned or not.
func (vm *VM) release() {
	if vm.slots != nil {
		<-vm.slots
	}
}

// workers are the goroutines that run calls. A call goes to an idle
// worker when there is one, else to a new one; a worker with no call for
// workerLinger exits. Reusing them saves growing a fresh goroutine's stack
// to what gopher-lua needs on every call (about a quarter of a short
// call's cost). A worker stuck in an abandoned call is simply not idle.
type workers struct {
	// jobs hands a call to an idle worker; unbuffered.
	jobs chan func()
}

// workerLinger is how long an idle worker waits for the next call.
const workerLinger = time.Second

func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		go w.loop(job)
	}
}

func (w *workers) loop(job func()) {
	for {
		job()
		idle := time.NewTimer(workerLinger)
		select {
		case job = <-w.jobs:
			idle.Stop()
		case <-idle.C:
			return
		}
	}
}

// runCall is one call on the guard's goroutine. A panic there would end
// the process (no caller can recover it), so it becomes an error.
func runCall[T any](ctx context.Context, vm *VM, body func(c *call) (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("lua: internal error: %v", p)
		}
	}()
	c, err := vm.newCall(ctx)
	if err != nil {
		return v, err
	}
	defer c.close()
	return body(c)
}

// StuckCalls is the number of abandoned calls whose goroutine has not
// returned yet.
func (vm *VM) StuckCalls() int64 { return vm.stuck.Load() }

// cleanTrace removes the frames of luaConcat from a Lua error's traceback:
// `..` is a function call only because the compiler made it one, and the
// traceback stays the one OP_CONCAT gives ("<string>:16: in main chunk").
func cleanTrace(err error) error {
	var apiErr *lua.ApiError
	if !errors.As(err, &apiErr) || !strings.Contains(apiErr.StackTrace, concatName) {
		return err
	}
	lines := strings.Split(apiErr.StackTrace, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !(strings.HasPrefix(l, "\t[G]: ") && strings.Contains(l, concatName)) {
			kept = append(kept, l)
		}
	}
	apiErr.StackTrace = strings.Join(kept, "\n")
	return err
}
