package luavm

import (
	"context"
	"strings"
	"testing"
	"time"
)

// sink keeps test allocations alive so that they count.
var sink []byte

// TestMemoryBudget runs allocation bombs with the time limit out of the
// way: the memory budget alone must stop each, and say so.
func TestMemoryBudget(t *testing.T) {
	limits := DefaultLimits()
	limits.Timeout = 10 * time.Minute
	limits.MaxInstructions = 0
	limits.MaxMemoryBytes = 64 << 20
	vm := New(Options{Limits: limits})
	bombs := map[string]string{
		"string doubling": `local s = "x" for i = 1, 60 do s = s .. s end`,
		"table growth":    `local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i, i} end`,
	}
	for name, body := range bombs {
		t.Run(name, func(t *testing.T) {
			_, err := vm.ReflectStatus(context.Background(), probe(), "function ReflectStatus(obj)\n"+body+"\nreturn {}\nend")
			if err == nil || !strings.Contains(err.Error(), "lua: memory budget of 67108864 bytes exceeded") {
				t.Fatalf("ReflectStatus(%s) error = %v; want the memory budget error", name, err)
			}
		})
	}
}

// TestMemoryReportedWhenDeadlineAlsoPassed is the race that made a loaded
// CI report a memory bomb as a timeout: the deadline is noticed before the
// watcher looked at the allocation counter. Memory that ran out must win.
func TestMemoryReportedWhenDeadlineAlsoPassed(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	b := newBudget(ctx, 0, 1<<20)
	defer b.stop()
	sink = make([]byte, 4<<20)
	err := b.Err()
	if err == nil || !strings.Contains(err.Error(), "lua: memory budget of 1048576 bytes exceeded") {
		t.Fatalf("Err() = %v; want the memory budget error", err)
	}
}

// TestMemoryCheckedWithoutWatcher proves that the running goroutine reads
// the allocation counter itself: within memCheckEvery instructions, before
// the watcher has even started, an exceeded budget stops the script.
func TestMemoryCheckedWithoutWatcher(t *testing.T) {
	b := newBudget(context.Background(), 0, 1<<20)
	defer b.stop()
	b.timer.Stop() // the watcher never runs
	sink = make([]byte, 4<<20)
	for i := 0; i < memCheckEvery; i++ {
		b.Done()
	}
	select {
	case <-b.Done():
	default:
		t.Fatalf("Done() still open after %d instructions over the memory budget", memCheckEvery)
	}
	if err := b.Err(); err == nil || !strings.Contains(err.Error(), "memory budget") {
		t.Fatalf("Err() = %v; want the memory budget error", err)
	}
}

// TestNoMemoryBudgetNoCheck: with no memory budget nothing trips.
func TestNoMemoryBudgetNoCheck(t *testing.T) {
	b := newBudget(context.Background(), 0, 0)
	defer b.stop()
	sink = make([]byte, 4<<20)
	for i := 0; i < 2*memCheckEvery; i++ {
		b.Done()
	}
	if err := b.Err(); err != nil {
		t.Fatalf("Err() = %v; want nil without budgets", err)
	}
}
