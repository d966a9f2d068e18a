// Package luavm runs ResourceInterpreterCustomization Lua scripts the way
// Karmada's luavm package does — same sandbox, same argument and result
// conversions, same error texts — with these deliberate differences:
//
//   - Every call gets a fresh LState. Nothing a script does (globals,
//     overridden library functions, the string metatable) survives the call.
//     Karmada pools states and leaks globals between calls and scripts.
//     The state is filled from the sandbox a VM opens once and records
//     (sandboxplan.go): every table is the call's own, only the immutable
//     Go function objects are shared, so a call costs no more than one of
//     Karmada's on a pooled state (test/luabench measures both).
//   - Besides the 1-second wall-clock budget, a call has an instruction budget
//     and a memory budget (see Limits and budget.go).
//   - Scripts are parsed and compiled once, keyed by their SHA-256, and the
//     FunctionProto is shared by all states (gopher-lua protos are immutable).
//     The compiler turns `..` into a call of a function that reserves the
//     result's size in the memory budget first (concat.go).
//   - Library functions are bounded too: the pattern matcher of find, match
//     and gmatch counts its steps as instructions and sees the deadline
//     (pattern.go); table.concat, string.format and `..` check their
//     result's size against the memory budget before allocating it
//     (bounded.go).
//   - Every call runs on a goroutine of its own that the caller abandons
//     when it is still running abandonGrace past its deadline, stuck in a
//     Go function (watchdog.go): the caller gets a budget error and is free.
//   - Options.Concurrency bounds the calls running at once (the agent sets
//     it, --lua-concurrency): a call waits for a slot within its deadline.
//
// Usage:
//
//	vm := luavm.New(luavm.Options{Limits: luavm.DefaultLimits()})
//	healthy, err := vm.InterpretHealth(ctx, obj, script)
//
// The operation methods (GetReplicas, ReviseReplica, Retain, AggregateStatus,
// ReflectStatus, InterpretHealth, GetDependencies, GetComponents) take the
// script to run; choosing the script for an object is the caller's job.
package luavm

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Limits bounds one call: script load, argument conversion and the function.
type Limits struct {
	// Timeout is the wall-clock budget of a call. Karmada uses 1 s.
	Timeout time.Duration
	// MaxInstructions is the number of Lua VM instructions a call may execute
	// (0 = unlimited). It is a deterministic CPU bound that does not depend on
	// machine load.
	MaxInstructions int64
	// MaxMemoryBytes is how many bytes the process may allocate during a call
	// before it is aborted (0 = unlimited). See budget.go for how it is measured.
	MaxMemoryBytes int64
	// CallStackSize is the maximum Lua call depth (gopher-lua's default, as in
	// Karmada: 256 frames).
	CallStackSize int
	// RegistryMaxSize is the maximum number of value-stack slots (Karmada:
	// 256*20, fixed).
	RegistryMaxSize int
}

// Defaults. The timeout, call stack and registry match Karmada so that scripts
// hit the same walls; the instruction and memory budgets are ours.
const (
	// DefaultTimeout is Karmada's per-call budget.
	DefaultTimeout = time.Second
	// DefaultMaxInstructions is far above what the slowest shipped script
	// needs (a few thousand) and above what gopher-lua runs in DefaultTimeout
	// on an idle core (~1e8), so the time limit fires first for endless loops
	// as in Karmada; it still bounds CPU when the wall clock is generous.
	DefaultMaxInstructions = 400_000_000
	// DefaultMaxMemoryBytes is the allocation budget of one call, in bytes.
	DefaultMaxMemoryBytes = 256 << 20
	// DefaultCallStackSize is gopher-lua's (and Karmada's) call depth.
	DefaultCallStackSize = 256
	// DefaultRegistryMaxSize is gopher-lua's default fixed registry, as in Karmada.
	DefaultRegistryMaxSize = 256 * 20
	// initialRegistrySize is where a fresh state's value stack starts; it
	// grows by registryGrowStep up to RegistryMaxSize. Starting small keeps a
	// fresh state cheap (Karmada pre-allocates the whole 5120 slots).
	initialRegistrySize = 256
	registryGrowStep    = 128
)

// DefaultLimits returns the production limits.
func DefaultLimits() Limits {
	return Limits{
		Timeout:         DefaultTimeout,
		MaxInstructions: DefaultMaxInstructions,
		MaxMemoryBytes:  DefaultMaxMemoryBytes,
		CallStackSize:   DefaultCallStackSize,
		RegistryMaxSize: DefaultRegistryMaxSize,
	}
}

// Options configure a VM.
type Options struct {
	// Limits bound each call; zero fields take DefaultLimits' values, except
	// MaxInstructions and MaxMemoryBytes where 0 means unlimited.
	Limits Limits
	// ResourceQuotaEstimate is Karmada's feature gate of that name (default
	// off): kube.accuratePodRequirements then also reports the template's
	// namespace and priorityClassName.
	ResourceQuotaEstimate bool
	// Concurrency bounds how many calls run at once (0 = unbounded): a
	// call waits for a slot within its own deadline, and a call abandoned
	// stuck (watchdog.go) keeps its slot until its goroutine returns.
	Concurrency int
}

// VM runs scripts. It is safe for concurrent use; each call has its own state.
type VM struct {
	limits Limits
	kube   *kubeLib

	// sandbox is the recorded sandbox every call's state is filled from
	// (sandboxplan.go); sandboxErr is why it could not be recorded.
	sandbox    *sandboxPlan
	sandboxErr error

	// mu guards protos.
	mu sync.RWMutex
	// protos caches compiled scripts (or their syntax error) by SHA-256.
	protos map[[sha256.Size]byte]compiled

	// workers run the calls (watchdog.go).
	workers workers
	// slots hold one token per running call when Options.Concurrency
	// bounds them; nil when unbounded.
	slots chan struct{}
	// stuck counts the calls abandoned by guard whose goroutine has not
	// returned yet.
	stuck atomic.Int64
	// testGlobals are Go functions set as globals of every call's state;
	// only tests set them (a function that blocks, to be abandoned).
	testGlobals map[string]lua.LGFunction
}

type compiled struct {
	proto *lua.FunctionProto
	err   error
}

// maxCachedProtos bounds the compiled-script cache; past it the cache is
// cleared (scripts come from a few hundred RICs at most).
const maxCachedProtos = 4096

// New returns a VM.
func New(opts Options) *VM {
	limits := opts.Limits
	d := DefaultLimits()
	if limits.Timeout <= 0 {
		limits.Timeout = d.Timeout
	}
	if limits.CallStackSize <= 0 {
		limits.CallStackSize = d.CallStackSize
	}
	if limits.RegistryMaxSize <= 0 {
		limits.RegistryMaxSize = d.RegistryMaxSize
	}
	vm := &VM{
		limits:  limits,
		kube:    newKubeLib(opts.ResourceQuotaEstimate),
		protos:  make(map[[sha256.Size]byte]compiled),
		workers: workers{jobs: make(chan func())},
	}
	if opts.Concurrency > 0 {
		vm.slots = make(chan struct{}, opts.Concurrency)
	}
	vm.sandbox, vm.sandboxErr = newSandboxPlan(vm.kube.loader)
	return vm
}

// Limits returns the VM's limits.
func (vm *VM) Limits() Limits { return vm.limits }

// Concurrency is how many calls may run at once; 0 is unbounded.
func (vm *VM) Concurrency() int { return cap(vm.slots) }

// Compile parses and compiles a script, or returns the cached result. The
// error text is gopher-lua's, e.g. "<string> line:2(column:9) near '=':   syntax error\n".
func (vm *VM) Compile(script string) (*lua.FunctionProto, error) {
	key := sha256.Sum256([]byte(script))
	vm.mu.RLock()
	c, ok := vm.protos[key]
	vm.mu.RUnlock()
	if ok {
		return c.proto, c.err
	}
	c = compileScript(script)
	vm.mu.Lock()
	if len(vm.protos) >= maxCachedProtos {
		clear(vm.protos)
	}
	vm.protos[key] = c
	vm.mu.Unlock()
	return c.proto, c.err
}

// chunkName is what DoString names a chunk; it appears in every position
// ("<string>:3:") and syntax error.
const chunkName = "<string>"

func compileScript(script string) compiled {
	chunk, err := parse.Parse(strings.NewReader(script), chunkName)
	if err != nil {
		return compiled{err: &lua.ApiError{Type: lua.ApiErrorSyntax, Object: lua.LString(err.Error()), Cause: err}}
	}
	chunk, _ = rewriteConcat(chunk)
	proto, err := lua.Compile(chunk, chunkName)
	if err != nil {
		return compiled{err: &lua.ApiError{Type: lua.ApiErrorSyntax, Object: lua.LString(err.Error()), Cause: err}}
	}
	return compiled{proto: proto}
}

// call is one script run: a fresh state with its budget.
type call struct {
	L      *lua.LState
	budget *budget
}

// newCall builds the sandboxed state for one call under ctx, which carries
// the call's deadline. The caller must close it.
func (vm *VM) newCall(ctx context.Context) (*call, error) {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       vm.limits.CallStackSize,
		RegistrySize:        min(initialRegistrySize, vm.limits.RegistryMaxSize),
		RegistryMaxSize:     vm.limits.RegistryMaxSize,
		RegistryGrowStep:    registryGrowStep,
		MinimizeStackMemory: true,
	})
	if vm.sandboxErr != nil {
		L.Close()
		return nil, fmt.Errorf("open lua sandbox: %w", vm.sandboxErr)
	}
	vm.sandbox.instantiate(L)
	for name, fn := range vm.testGlobals {
		L.SetGlobal(name, L.NewFunction(fn))
	}
	b := newBudget(ctx, vm.limits.MaxInstructions, vm.limits.MaxMemoryBytes)
	L.SetContext(b)
	return &call{L: L, budget: b}, nil
}

func (c *call) close() {
	c.budget.stop()
	c.L.Close()
}

// run loads the script (running its top-level code), converts the arguments,
// calls the global fnName and returns nRets results, like Karmada's RunScript.
// The returned values belong to c.L; convert them before closing the call.
func (vm *VM) run(c *call, script, fnName string, nRets int, args ...any) ([]lua.LValue, error) {
	proto, err := vm.Compile(script)
	if err != nil {
		return nil, err
	}
	L := c.L
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		return nil, cleanTrace(err)
	}
	vArgs := make([]lua.LValue, len(args))
	for i, arg := range args {
		if vArgs[i], err = toLua(L, arg); err != nil {
			return nil, err
		}
	}
	f := L.GetGlobal(fnName)
	if f.Type() == lua.LTNil {
		return nil, fmt.Errorf("not found function %v", fnName)
	}
	if f.Type() != lua.LTFunction {
		return nil, fmt.Errorf("%s is not a function: %s", fnName, f.Type())
	}
	// Like Karmada, values the main chunk returned stay on the stack, so a
	// top-level "return" shifts the results read below.
	if err := L.CallByParam(lua.P{Fn: f, NRet: nRets, Protect: true}, vArgs...); err != nil {
		return nil, cleanTrace(err)
	}
	rets := make([]lua.LValue, nRets)
	for i := range rets {
		rets[i] = L.Get(i + 1)
	}
	L.SetTop(0)
	return rets, nil
}

// Validate checks that a script compiles, that its top-level code runs, and
// that it defines the global function fnName, in a fresh sandbox with the
// VM's limits. It is the load-time check for a customization.
func (vm *VM) Validate(ctx context.Context, script, fnName string) error {
	proto, err := vm.Compile(script)
	if err != nil {
		return err
	}
	_, err = guard(ctx, vm, func(c *call) (struct{}, error) {
		c.L.Push(c.L.NewFunctionFromProto(proto))
		if err := c.L.PCall(0, lua.MultRet, nil); err != nil {
			return struct{}{}, cleanTrace(err)
		}
		f := c.L.GetGlobal(fnName)
		if f.Type() == lua.LTNil {
			return struct{}{}, fmt.Errorf("not found function %v", fnName)
		}
		if f.Type() != lua.LTFunction {
			return struct{}{}, fmt.Errorf("%s is not a function: %s", fnName, f.Type())
		}
		return struct{}{}, nil
	})
	return err
}
