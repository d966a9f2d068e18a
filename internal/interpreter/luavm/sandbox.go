package luavm

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The sandbox is Karmada's (luavm.setLib): package (preload loader only),
// base, table, a safe string library, math and a safe os library with only
// time and date; io, debug, coroutine and channel are not opened. Base
// functions that reach outside the sandbox or around it are redefined to
// raise an error, and the kube module is preloaded.

// disabledBaseFuncs are redefined in Lua to raise
// "call function NAME is not supported in karmada customized resourceinterpreter.".
var disabledBaseFuncs = []string{
	"collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring",
	"rawequal", "rawget", "rawset", "setfenv", "setmetatable", "module", "newproxy",
}

// disableProto redefines disabledBaseFuncs. Karmada runs one DoString per
// function; all definitions sit on line 1 of one chunk here, which gives the
// same positions and tracebacks ("<string>:1: in function 'load'").
var disableProto = func() *lua.FunctionProto {
	var b strings.Builder
	for _, name := range disabledBaseFuncs {
		fmt.Fprintf(&b, "function %s() error('call function %s is not supported in karmada customized resourceinterpreter.') end ", name, name)
	}
	c := compileScript(b.String())
	if c.err != nil {
		panic(c.err)
	}
	return c.proto
}()

func openSandbox(L *lua.LState, kube lua.LGFunction) error {
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, openSafePackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, openSafeString},
		{lua.MathLibName, lua.OpenMath},
		{lua.OsLibName, openSafeOs},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return err
		}
	}
	// table.concat reserves its result's size first (bounded.go), and the
	// compiler's `..` calls luaConcat (concat.go).
	tab := L.GetGlobal(lua.TabLibName).(*lua.LTable)
	orig := tab.RawGetString("concat").(*lua.LFunction).GFunction
	tab.RawSetString("concat", L.NewFunction(boundedTableConcat(orig)))
	L.SetGlobal(concatName, L.NewFunction(luaConcat))
	// print and _printregs write to the process's stdout in Karmada; a
	// server must not let scripts write there, so they do nothing here.
	L.SetGlobal("print", L.NewFunction(func(*lua.LState) int { return 0 }))
	L.SetGlobal("_printregs", L.NewFunction(func(*lua.LState) int { return 0 }))
	L.Push(L.NewFunctionFromProto(disableProto))
	if err := L.PCall(0, 0, nil); err != nil {
		return err
	}
	L.PreloadModule(kubeLibName, kube)
	return nil
}

// openSafePackage is gopher-lua's package library without the file and C
// loaders: require only finds package.preload entries, and package.loadlib
// always fails.
func openSafePackage(L *lua.LState) int {
	mod := L.RegisterModule(lua.LoadLibName, map[string]lua.LGFunction{
		"loadlib": func(L *lua.LState) int {
			L.RaiseError("loadlib is not supported")
			return 0
		},
	})
	L.SetField(mod, "preload", L.NewTable())
	loaders := L.CreateTable(1, 0)
	L.RawSetInt(loaders, 1, L.NewFunction(preloadLoader))
	L.SetField(mod, "loaders", loaders)
	L.SetField(L.Get(lua.RegistryIndex), "_LOADERS", loaders)
	loaded := L.NewTable()
	L.SetField(mod, "loaded", loaded)
	L.SetField(L.Get(lua.RegistryIndex), "_LOADED", loaded)
	L.Push(mod)
	return 1
}

func preloadLoader(L *lua.LState) int {
	name := L.CheckString(1)
	preload := L.GetField(L.GetField(L.Get(lua.EnvironIndex), "package"), "preload")
	if _, ok := preload.(*lua.LTable); !ok {
		L.RaiseError("package.preload must be a table")
	}
	lv := L.GetField(preload, name)
	if lv == lua.LNil {
		L.Push(lua.LString(fmt.Sprintf("no field package.preload['%s']", name)))
		return 1
	}
	L.Push(lv)
	return 1
}
