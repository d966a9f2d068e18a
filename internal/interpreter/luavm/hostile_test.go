package luavm

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func probe() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.io/v1", "kind": "Probe",
		"metadata": map[string]any{"name": "p", "namespace": "lab"},
		"spec":     map[string]any{"replicas": int64(3)},
	}}
}

// anyBudget accepts any budget error (time, instructions or memory).
const anyBudget = "<any budget>"

const normalScript = `function ReflectStatus(obj) return {replicas = obj.spec.replicas} end`

// TestHostileScripts runs scripts that attack the sandbox or the limits:
// each must fail with a clear error inside the limits, and the next normal
// call on the same VM must succeed.
func TestHostileScripts(t *testing.T) {
	limits := DefaultLimits()
	limits.MaxMemoryBytes = 64 << 20
	vm := New(Options{Limits: limits})
	tests := []struct {
		name, body, wantErr string
	}{
		{"endless loop", `while true do end`, "context deadline exceeded"},
		// Memory or time, whichever runs out first on a loaded machine
		// (TestMemoryBudget takes the time limit out of the way).
		{"string doubling bomb", `local s = "x" for i = 1, 60 do s = s .. s end`, anyBudget},
		{"table growth bomb", `local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i, i} end`, anyBudget},
		{"deep recursion", `local function f(n) return f(n + 1) + 1 end f(1)`, "stack overflow"},
		{"string.rep huge", `local s = string.rep("x", 1e12)`, "string.rep is not supported"},
		{"load", `load("return 1")`, "call function load is not supported"},
		{"loadstring", `loadstring("return 1")()`, "call function loadstring is not supported"},
		{"setmetatable abuse", `setmetatable(_G, {__index = function() return 1 end})`, "call function setmetatable is not supported"},
		{"string metatable", `getmetatable("").__index.upper = nil`, "call function getmetatable is not supported"},
		{"rawset", `rawset(_G, "x", 1)`, "call function rawset is not supported"},
		{"os.exit", `os.exit(1)`, "attempt to call a non-function object"},
		{"os.execute", `os.execute("rm -rf /")`, "attempt to call a non-function object"},
		{"io", `io.open("/etc/passwd")`, "attempt to index a non-table object(nil) with key 'open'"},
		{"require a file", `require("os.execute")`, "module os.execute not found"},
		{"require io", `require("io")`, "module io not found"},
		{"dofile", `dofile("/etc/passwd")`, "call function dofile is not supported"},
		{"loadlib", `package.loadlib("libc.so.6", "exit")`, "loadlib is not supported"},
		{"coroutine", `coroutine.create(function() end)`, "attempt to index a non-table object(nil) with key 'create'"},
		{"debug", `debug.sethook()`, "attempt to index a non-table object(nil) with key 'sethook'"},
		{"big string arg", `local s = "a" for i = 1, 21 do s = s .. s end string.upper(s)`, "exceeds the maximum allowed input string length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := "function ReflectStatus(obj)\n" + tt.body + "\nreturn {}\nend"
			_, err := vm.ReflectStatus(context.Background(), probe(), script)
			if err == nil || (tt.wantErr == anyBudget && !IsBudgetError(err)) ||
				(tt.wantErr != anyBudget && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("ReflectStatus(%s) error = %v; want one containing %q", tt.name, err, tt.wantErr)
			}
			status, err := vm.ReflectStatus(context.Background(), probe(), normalScript)
			if err != nil || string(status.Raw) != `{"replicas":3}` {
				t.Fatalf("normal call after %s = %s, %v; want {\"replicas\":3}", tt.name, status.Raw, err)
			}
		})
	}
}

// TestInstructionBudget checks the deterministic CPU bound.
func TestInstructionBudget(t *testing.T) {
	limits := DefaultLimits()
	limits.MaxInstructions = 100_000
	limits.Timeout = time.Minute
	vm := New(Options{Limits: limits})
	_, err := vm.ReflectStatus(context.Background(), probe(), "function ReflectStatus(o) while true do end end")
	if err == nil || !strings.Contains(err.Error(), "<string>:1: lua: instruction budget of 100000 exceeded") {
		t.Fatalf("ReflectStatus(endless) error = %v; want the instruction budget error", err)
	}
	if !IsBudgetError(err) {
		t.Errorf("IsBudgetError(%v) = false; want true", err)
	}
	// A finite script under the budget runs.
	status, err := vm.ReflectStatus(context.Background(), probe(),
		"function ReflectStatus(o) local s = 0 for i = 1, 1000 do s = s + i end return {sum = s} end")
	if err != nil || string(status.Raw) != `{"sum":500500}` {
		t.Fatalf("ReflectStatus(finite) = %s, %v; want {\"sum\":500500}", status.Raw, err)
	}
}

// TestNoStateSharedBetweenCalls proves that globals, overridden library
// functions and the string metatable do not survive a call (Karmada's
// pooled states keep them).
func TestNoStateSharedBetweenCalls(t *testing.T) {
	vm := New(Options{Limits: DefaultLimits()})
	ctx := context.Background()
	counter := `counter = (counter or 0) + 1
function ReflectStatus(o) return {counter = counter} end`
	for i := 0; i < 3; i++ {
		status, err := vm.ReflectStatus(ctx, probe(), counter)
		if err != nil || string(status.Raw) != `{"counter":1}` {
			t.Fatalf("call %d: ReflectStatus(counter) = %s, %v; want {\"counter\":1}", i, status.Raw, err)
		}
	}
	poison := `string.upper = function() return "poisoned" end
leftover = "x"
function GetReplicas(o) return 7, nil end
function ReflectStatus(o) return {v = string.upper("a")} end`
	if status, err := vm.ReflectStatus(ctx, probe(), poison); err != nil || string(status.Raw) != `{"v":"poisoned"}` {
		t.Fatalf("ReflectStatus(poison) = %s, %v", status.Raw, err)
	}
	check := `function ReflectStatus(o) return {v = ("a"):upper(), leftover = type(leftover), getReplicas = type(GetReplicas)} end`
	status, err := vm.ReflectStatus(ctx, probe(), check)
	if err != nil || string(status.Raw) != `{"getReplicas":"nil","leftover":"nil","v":"A"}` {
		t.Fatalf("ReflectStatus(check) = %s, %v; want no leftovers", status.Raw, err)
	}
	// A script without GetReplicas must not find one left by another script.
	if _, _, err := vm.GetReplicas(ctx, probe(), `x = 1`); err == nil || err.Error() != "not found function GetReplicas" {
		t.Fatalf("GetReplicas(no function) error = %v; want not found function GetReplicas", err)
	}
}

// TestCompiledOnce checks that the script cache returns the same proto.
func TestCompiledOnce(t *testing.T) {
	vm := New(Options{})
	p1, err := vm.Compile(normalScript)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := vm.Compile(normalScript)
	if p1 != p2 {
		t.Errorf("Compile twice gave different protos; want the cached one")
	}
	_, err = vm.Compile("function f(\n")
	if err == nil || !strings.HasPrefix(err.Error(), "<string> ") {
		t.Errorf("Compile(broken) error = %v; want gopher-lua's syntax error", err)
	}
}
