package luavm

import (
	"context"
	"fmt"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// How the budgets work.
//
// gopher-lua's main loop, when the state has a context, evaluates
// `select { case <-L.ctx.Done(): L.RaiseError(L.ctx.Err().Error()) ... }`
// before every VM instruction (vm.go mainLoopWithContext). A budget is that
// context: it wraps the call's deadline context and its Done method is the
// per-instruction hook.
//
//   - Instructions: Done counts its calls. Past MaxInstructions it returns a
//     closed channel and Err says which budget ran out, so the script fails
//     at the current instruction with "<string>:LINE: lua: instruction budget
//     of N exceeded" and a traceback, exactly like a timeout does.
//   - Memory: Go has no per-goroutine allocation counter, so the bound is
//     measured on the process: the runtime's cumulative heap allocation
//     counter (runtime/metrics "/gc/heap/allocs:bytes") is read when the call
//     starts and, if the call is still running after memWatchDelay, every
//     memPollInterval by a watcher goroutine. When the bytes allocated since
//     the start pass MaxMemoryBytes the budget trips and the script stops at
//     its next instruction. The counter is process-wide, so allocations by
//     other goroutines during the call count too: the bound can only abort
//     early under heavy concurrent allocation, never let a script allocate
//     more than the limit plus what it allocates within one poll interval and
//     one instruction (one instruction can double a string: "s = s .. s").
//     Calls shorter than memWatchDelay never start the watcher. The
//     watcher is only the fast path: the running goroutine also reads the
//     counter itself every memCheckEvery instructions, and once more when
//     the deadline has passed (Err), so a budget that ran out is reported
//     as such even when the watcher was never scheduled on a loaded machine.
//   - Library functions: the pattern matcher charges its steps as
//     instructions (charge), which also reads the allocation counter and
//     the deadline; functions that build one large value reserve its size
//     first (reserve), so that one call cannot allocate past the budget
//     between two of its checks.
//   - Time: the wrapped context's deadline, as in Karmada. When time and
//     memory have both run out by the instruction that notices, the error
//     names memory: the script's own allocation is what stopped it, and the
//     report must not depend on which of the two a busy scheduler saw first.
const (
	// memWatchDelay is how long a call runs before its memory is watched.
	memWatchDelay = time.Millisecond
	// memPollInterval is how often the watcher reads the allocation counter.
	memPollInterval = 500 * time.Microsecond
	// memCheckEvery is how many instructions run between two reads of the
	// allocation counter by the script's own goroutine. A read costs about
	// 0.6 µs, so this adds well under 1 ns per instruction.
	memCheckEvery = 4096
	allocsMetric  = "/gc/heap/allocs:bytes"
)

// ErrBudget is the class of errors a budget reports; the message says which.
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

type budget struct {
	context.Context

	maxInstructions int64
	// instructions is only touched by the goroutine running the state.
	instructions int64
	// tripped holds the budget error once a budget ran out.
	tripped atomic.Pointer[budgetError]

	maxMemory   int64
	startAllocs uint64

	// mu guards stopped and makes the watcher's start and stop race-free.
	mu      sync.Mutex
	stopped bool
	timer   *time.Timer
	quit    chan struct{}
	wg      sync.WaitGroup
}

func newBudget(ctx context.Context, maxInstructions, maxMemory int64) *budget {
	b := &budget{Context: ctx, maxInstructions: maxInstructions, maxMemory: maxMemory}
	if maxMemory > 0 {
		b.startAllocs = heapAllocs()
		b.quit = make(chan struct{})
		b.timer = time.AfterFunc(memWatchDelay, b.startWatch)
	}
	return b
}

// Done is called by gopher-lua before every instruction.
func (b *budget) Done() <-chan struct{} {
	b.instructions++
	if b.maxInstructions > 0 && b.instructions > b.maxInstructions {
		b.trip(fmt.Sprintf("lua: instruction budget of %d exceeded", b.maxInstructions))
	}
	if b.instructions%memCheckEvery == 0 {
		b.checkMemory()
	}
	if b.tripped.Load() != nil {
		return closedChan
	}
	return b.Context.Done()
}

// charge counts n units of work a library function did on the script's
// goroutine (pattern matcher steps) as n instructions, and returns the
// budget error once a budget ran out, or the deadline's error once it
// passed: the function stops there, as the VM would at its next
// instruction. It also reads the allocation counter, so a function that
// charges regularly cannot outgrow the memory budget by more than what it
// allocates between two charges.
func (b *budget) charge(n int) error {
	b.instructions += int64(n)
	if b.maxInstructions > 0 && b.instructions > b.maxInstructions {
		b.trip(fmt.Sprintf("lua: instruction budget of %d exceeded", b.maxInstructions))
	}
	b.checkMemory()
	return b.Err()
}

// reserve is called before a library function allocates a result of n
// bytes in one piece: if that would take the call past its memory budget,
// the budget trips and its error, naming the size, is returned, and
// nothing is allocated.
func (b *budget) reserve(what string, n int64) error {
	if b.maxMemory <= 0 {
		return nil
	}
	used := int64(heapAllocs() - b.startAllocs)
	if used+n <= b.maxMemory {
		return nil
	}
	b.trip(fmt.Sprintf("lua: memory budget of %d bytes exceeded", b.maxMemory))
	return fmt.Errorf("lua: memory budget of %d bytes exceeded: %s would allocate %d bytes with %d already allocated",
		b.maxMemory, what, n, used)
}

// Err reports the budget that ran out, else the deadline's error.
// gopher-lua calls it once the deadline's channel is closed: the last read
// of the allocation counter happens here, so memory that ran out before the
// deadline was noticed is reported as memory.
func (b *budget) Err() error {
	if e := b.tripped.Load(); e != nil {
		return e
	}
	if err := b.Context.Err(); err == nil {
		return nil
	}
	if b.checkMemory() {
		return b.tripped.Load()
	}
	return b.Context.Err()
}

// checkMemory trips the memory budget if the process allocated more than it
// allows since the call started, and reports whether it did.
func (b *budget) checkMemory() bool {
	if b.maxMemory <= 0 || heapAllocs()-b.startAllocs <= uint64(b.maxMemory) {
		return false
	}
	b.trip(fmt.Sprintf("lua: memory budget of %d bytes exceeded", b.maxMemory))
	return true
}

func (b *budget) trip(msg string) {
	b.tripped.CompareAndSwap(nil, &budgetError{msg: msg})
}

func (b *budget) startWatch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.wg.Add(1)
	go b.watch()
}

func (b *budget) watch() {
	defer b.wg.Done()
	t := time.NewTicker(memPollInterval)
	defer t.Stop()
	for !b.checkMemory() {
		select {
		case <-b.quit:
			return
		case <-b.Context.Done():
			return // Err takes the last look.
		case <-t.C:
		}
	}
}

// stop ends the watcher, if any, and waits for it.
func (b *budget) stop() {
	if b.timer == nil {
		return
	}
	b.mu.Lock()
	b.stopped = true
	b.timer.Stop()
	close(b.quit)
	b.mu.Unlock()
	b.wg.Wait()
}

func heapAllocs() uint64 {
	s := [1]metrics.Sample{{Name: allocsMetric}}
	metrics.Read(s[:])
	return s[0].Value.Uint64()
}

// IsBudgetError reports whether err came from a call that ran out of time,
// instructions or memory, was abandoned stuck past its deadline, or found
// no free call slot (Options.Concurrency) before it.
func IsBudgetError(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, context.DeadlineExceeded.Error()) ||
		strings.Contains(msg, "lua: instruction budget of") || strings.Contains(msg, "lua: memory budget of") ||
		strings.Contains(msg, errAbandoned) || strings.Contains(msg, errNoSlot)
}
