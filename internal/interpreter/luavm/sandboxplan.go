package luavm

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// Opening the sandbox's libraries is most of a short call's cost: the
// library openers build every table key by key and create one function
// object per library function (about 500 allocations). A VM therefore opens
// the sandbox once, in a template state that never runs a script, and
// records it as a plan; each call's fresh state is then filled from the
// plan:
//
//   - every table (globals, registry, package, string, table, math, os, ...)
//     is a new table of the state, with the template's keys in the
//     template's order and its exact size, so a script that changes a
//     library changes only its own copy;
//   - the Lua functions (the disabled base functions) are new closures of
//     the state over the template's compiled protos;
//   - the Go functions that read their environment (require, and the
//     preload loader of package.loaders) are new function objects of the
//     state;
//   - every other Go function object is shared by all states. Nothing in
//     the sandbox can change a function object: setfenv is disabled and
//     debug is not opened; upvalues of Go closures cannot be reached. Their
//     environment is set to nil, so a path that reads it fails the call
//     instead of reaching the template's globals.
//
// The string metatable is the state's own copy of the string table, as the
// library opener makes it.

// sandboxPlan is the recorded template.
type sandboxPlan struct {
	// tables[0] fills the state's globals, tables[1] its registry; the
	// others are created.
	tables []tablePlan
	// stringMeta is the index of the table that is the strings' metatable.
	stringMeta int
}

const (
	globalsTable  = 0
	registryTable = 1
)

type tablePlan struct {
	// arrayLen and hashLen size the new table.
	arrayLen, hashLen int
	entries           []planEntry
}

type entryKind uint8

const (
	// entryValue is a string, number, boolean or shared Go function.
	entryValue entryKind = iota
	// entryTable refers to plan.tables[table].
	entryTable
	// entryEnvFunc is a Go function created in each state (it reads its
	// environment).
	entryEnvFunc
	// entryLuaFunc is a closure over proto created in each state.
	entryLuaFunc
)

type planEntry struct {
	// key is a string, or an array index when intKey > 0.
	key    string
	intKey int
	kind   entryKind
	value  lua.LValue
	table  int
	gofn   lua.LGFunction
	proto  *lua.FunctionProto
}

// envFuncs are the globals whose Go function reads its environment
// (EnvironIndex): gopher-lua's require and module find package.loaders
// through it. Every function of package.loaders is one too (preloadLoader).
var envFuncs = map[string]bool{"require": true, "module": true}

// newSandboxPlan opens the sandbox in a template state and records it.
func newSandboxPlan(kube lua.LGFunction) (*sandboxPlan, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	if err := openSandbox(L, kube); err != nil {
		return nil, err
	}
	b := planBuilder{index: map[*lua.LTable]int{}, shared: map[*lua.LFunction]bool{}}
	global := L.Get(lua.GlobalsIndex).(*lua.LTable)
	registry := L.Get(lua.RegistryIndex).(*lua.LTable)
	b.index[global] = globalsTable
	b.index[registry] = registryTable
	b.plan.tables = make([]tablePlan, 2)
	b.queue = []*lua.LTable{global, registry}
	loaders, _ := registry.RawGetString("_LOADERS").(*lua.LTable)
	for i := 0; i < len(b.queue); i++ {
		if err := b.record(i, b.queue[i], b.queue[i] == loaders, b.queue[i] == global); err != nil {
			return nil, err
		}
	}
	mt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("sandbox template: strings have no metatable")
	}
	idx, ok := b.index[mt]
	if !ok {
		return nil, fmt.Errorf("sandbox template: the strings' metatable is not reachable from the globals")
	}
	b.plan.stringMeta = idx
	for fn := range b.shared {
		detach(fn)
	}
	return &b.plan, nil
}

type planBuilder struct {
	plan   sandboxPlan
	index  map[*lua.LTable]int
	queue  []*lua.LTable
	shared map[*lua.LFunction]bool
	// perState counts the functions created per state, which must be
	// reachable once only (a second reference would become a second object).
	perState map[*lua.LFunction]bool
}

// record walks t in its iteration order and records its entries.
func (b *planBuilder) record(i int, t *lua.LTable, isLoaders, isGlobals bool) error {
	tp := tablePlan{}
	if t.Metatable != lua.LNil {
		return fmt.Errorf("sandbox template: a table has a metatable")
	}
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		e := planEntry{}
		switch key := k.(type) {
		case lua.LString:
			e.key = string(key)
			tp.hashLen++
		case lua.LNumber:
			n := int(key)
			if float64(n) != float64(key) || n < 1 {
				return fmt.Errorf("sandbox template: unsupported key %v", key)
			}
			e.intKey = n
			tp.arrayLen = max(tp.arrayLen, n)
		default:
			return fmt.Errorf("sandbox template: unsupported key type %s", k.Type())
		}
		if err := b.recordValue(&e, v, isLoaders || (isGlobals && envFuncs[e.key])); err != nil {
			return fmt.Errorf("sandbox template: %v: %w", k, err)
		}
		tp.entries = append(tp.entries, e)
	}
	b.plan.tables[i] = tp
	return nil
}

func (b *planBuilder) recordValue(e *planEntry, v lua.LValue, readsEnv bool) error {
	switch val := v.(type) {
	case lua.LString, lua.LNumber, lua.LBool:
		e.kind, e.value = entryValue, v
	case *lua.LTable:
		idx, ok := b.index[val]
		if !ok {
			idx = len(b.plan.tables)
			b.index[val] = idx
			b.plan.tables = append(b.plan.tables, tablePlan{})
			b.queue = append(b.queue, val)
		}
		e.kind, e.table = entryTable, idx
	case *lua.LFunction:
		switch {
		case !val.IsG:
			if len(val.Upvalues) != 0 {
				return fmt.Errorf("a Lua function with upvalues")
			}
			e.kind, e.proto = entryLuaFunc, val.Proto
		case readsEnv:
			if len(val.Upvalues) != 0 {
				return fmt.Errorf("a Go closure that reads its environment")
			}
			e.kind, e.gofn = entryEnvFunc, val.GFunction
		default:
			e.kind, e.value = entryValue, val
			b.shared[val] = true
		}
		if e.kind != entryValue {
			if b.perState == nil {
				b.perState = map[*lua.LFunction]bool{}
			}
			if b.perState[val] {
				return fmt.Errorf("a function created per state is referenced twice")
			}
			b.perState[val] = true
		}
	default:
		return fmt.Errorf("unsupported value type %s", v.Type())
	}
	return nil
}

// detach clears a shared Go function's environment, and those of the Go
// functions its upvalues hold (the iterators of pairs, ipairs and gmatch).
func detach(fn *lua.LFunction) {
	fn.Env = nil
	for _, uv := range fn.Upvalues {
		if inner, ok := uv.Value().(*lua.LFunction); ok && inner.IsG {
			inner.Env = nil
		}
	}
}

// instantiate fills the fresh state L from the plan.
func (p *sandboxPlan) instantiate(L *lua.LState) {
	tables := make([]*lua.LTable, len(p.tables))
	tables[globalsTable] = L.Get(lua.GlobalsIndex).(*lua.LTable)
	tables[registryTable] = L.Get(lua.RegistryIndex).(*lua.LTable)
	for i := registryTable + 1; i < len(p.tables); i++ {
		tables[i] = L.CreateTable(p.tables[i].arrayLen, p.tables[i].hashLen)
	}
	for i, tp := range p.tables {
		t := tables[i]
		for _, e := range tp.entries {
			var v lua.LValue
			switch e.kind {
			case entryValue:
				v = e.value
			case entryTable:
				v = tables[e.table]
			case entryEnvFunc:
				v = L.NewFunction(e.gofn)
			case entryLuaFunc:
				v = L.NewFunctionFromProto(e.proto)
			}
			if e.intKey > 0 {
				t.RawSetInt(e.intKey, v)
			} else {
				t.RawSetString(e.key, v)
			}
		}
	}
	L.SetMetatable(lua.LString(""), tables[p.stringMeta])
}
