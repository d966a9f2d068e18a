package luavm

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSandboxPlanMatchesOpenedSandbox compares a state filled from the plan
// with one whose libraries were opened: the same tables with the same keys,
// the same Go functions, closures over the same protos, the same sharing
// (package.loaded.string is string, string.__index is string, _G is the
// globals) and the same string metatable.
func TestSandboxPlanMatchesOpenedSandbox(t *testing.T) {
	vm := New(Options{})
	if vm.sandboxErr != nil {
		t.Fatal(vm.sandboxErr)
	}
	opened := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer opened.Close()
	if err := openSandbox(opened, vm.kube.loader); err != nil {
		t.Fatal(err)
	}
	filled := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer filled.Close()
	vm.sandbox.instantiate(filled)

	c := sandboxComparer{seen: map[*lua.LTable]*lua.LTable{}}
	c.table("_G", opened.G.Global, filled.G.Global)
	c.table("registry", opened.G.Registry, filled.G.Registry)
	om, fm := opened.GetMetatable(lua.LString("")), filled.GetMetatable(lua.LString(""))
	if fm != filled.GetGlobal("string") {
		c.errs = append(c.errs, "the strings' metatable is not the state's string table")
	}
	if om != opened.GetGlobal("string") {
		c.errs = append(c.errs, "opened: the strings' metatable is not the string table")
	}
	for _, e := range c.errs {
		t.Error(e)
	}
	if c.functions < 80 {
		t.Errorf("compared %d functions; want the whole sandbox (80 or more)", c.functions)
	}
}

type sandboxComparer struct {
	// seen maps each opened table to its filled counterpart, so that
	// sharing is compared too.
	seen      map[*lua.LTable]*lua.LTable
	functions int
	errs      []string
}

func (c *sandboxComparer) table(path string, o, f *lua.LTable) {
	if prev, ok := c.seen[o]; ok {
		if prev != f {
			c.errs = append(c.errs, fmt.Sprintf("%s: a table shared in the opened sandbox is a copy in the filled one", path))
		}
		return
	}
	c.seen[o] = f
	n := 0
	o.ForEach(func(k, ov lua.LValue) {
		n++
		c.value(fmt.Sprintf("%s[%v]", path, k), ov, f.RawGet(k))
	})
	m := 0
	f.ForEach(func(lua.LValue, lua.LValue) { m++ })
	if m != n {
		c.errs = append(c.errs, fmt.Sprintf("%s: %d keys filled, %d opened", path, m, n))
	}
}

func (c *sandboxComparer) value(path string, o, f lua.LValue) {
	if o.Type() != f.Type() {
		c.errs = append(c.errs, fmt.Sprintf("%s: %s filled, %s opened", path, f.Type(), o.Type()))
		return
	}
	switch ov := o.(type) {
	case *lua.LTable:
		c.table(path, ov, f.(*lua.LTable))
	case *lua.LFunction:
		c.functions++
		fv := f.(*lua.LFunction)
		switch {
		case ov.IsG != fv.IsG:
			c.errs = append(c.errs, fmt.Sprintf("%s: IsG %v filled, %v opened", path, fv.IsG, ov.IsG))
		case ov.IsG && reflect.ValueOf(ov.GFunction).Pointer() != reflect.ValueOf(fv.GFunction).Pointer():
			c.errs = append(c.errs, fmt.Sprintf("%s: a different Go function", path))
		case !ov.IsG && (fv.Proto == nil || fv.Proto.String() != ov.Proto.String()):
			c.errs = append(c.errs, fmt.Sprintf("%s: a different Lua function", path))
		case !ov.IsG && fv.Env == nil:
			c.errs = append(c.errs, fmt.Sprintf("%s: a Lua function without environment", path))
		}
	default:
		if o.String() != f.String() {
			c.errs = append(c.errs, fmt.Sprintf("%s: %v filled, %v opened", path, f, o))
		}
	}
}

// TestLibrariesNotSharedBetweenCalls changes every library table, the
// package tables and the string metatable in one call and checks that the
// next call sees the pristine sandbox: the states share function objects,
// never tables.
func TestLibrariesNotSharedBetweenCalls(t *testing.T) {
	vm := New(Options{Limits: DefaultLimits()})
	ctx := context.Background()
	poison := `
require("kube").resourceAdd = nil
string.upper = function() return "poisoned" end
string.extra = 1
table.insert = nil
math.floor = function() return -1 end
math.pi = 3
os.time = nil
package.preload.kube = function() return {poisoned = true} end
package.loaded.poisoned = {}
package.loaders[2] = function() return nil end
_G.assert = nil
_VERSION = "poisoned"
function ReflectStatus(o) return {v = ("a"):upper(), kube = require("kube").poisoned} end`
	status, err := vm.ReflectStatus(ctx, probe(), poison)
	if err != nil || rawOf(status) != `{"v":"poisoned"}` {
		t.Fatalf("ReflectStatus(poison) = %s, %v", rawOf(status), err)
	}
	check := `
local kube = require("kube")
function ReflectStatus(o)
  local t = {}
  table.insert(t, 1)
  return {
    upper = ("a"):upper(), extra = type(string.extra), floor = math.floor(1.5), pi = math.pi > 3.14,
    time = type(os.time), kube = type(kube.resourceAdd), loaded = type(package.loaded.poisoned),
    assert = type(assert), version = _VERSION, n = #t, loaders = #package.loaders,
  }
end`
	status, err = vm.ReflectStatus(ctx, probe(), check)
	want := `{"assert":"function","extra":"nil","floor":1,"kube":"function","loaded":"nil","loaders":1,"n":1,"pi":true,"time":"function","upper":"A","version":"Lua 5.1"}`
	if err != nil || rawOf(status) != want {
		t.Fatalf("ReflectStatus(check) = %s, %v; want %s", rawOf(status), err, want)
	}
}

func rawOf(r *runtime.RawExtension) string {
	if r == nil {
		return "<nil>"
	}
	return string(r.Raw)
}

// TestConcurrentCallsShareNoTable runs calls that change the libraries on
// many goroutines at once; each must see only its own changes. Under -race
// it also checks that the shared function objects are only read.
func TestConcurrentCallsShareNoTable(t *testing.T) {
	vm := New(Options{Limits: DefaultLimits()})
	const workers, calls = 8, 20
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			for i := 0; i < calls; i++ {
				script := fmt.Sprintf(`
local before = string.mark
string.mark = %d
math.mark = %d
function ReflectStatus(o) return {before = type(before), mark = string.mark + math.mark, n = #string.format("%%d", 7)} end`, w, i)
				status, err := vm.ReflectStatus(context.Background(), probe(), script)
				want := fmt.Sprintf(`{"before":"nil","mark":%d,"n":1}`, w+i)
				if err != nil || rawOf(status) != want {
					errs <- fmt.Errorf("worker %d call %d: %s, %v; want %s", w, i, rawOf(status), err, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
