// Package luabench measures Tether's Lua engine (internal/interpreter/luavm:
// a fresh, budgeted state per call) against Karmada v1.18.2's own
// (pkg/resourceinterpreter/customized/declarative/luavm: a pool of ten
// long-lived states, as Karmada's configurable interpreter builds it).
//
// It is a module of its own so that Karmada and the Kubernetes libraries it
// needs stay out of Tether's go.mod; it replaces github.com/tetherproj/tether
// with the checkout around it.
//
// Both engines run the same scripts on the same inputs: the scripts of the
// conformance suite's Workload customization
// (internal/interpreter/testdata/conformance/interpreter/customizations/workload.yaml)
// and the inputs of its cases. TestSameResults checks that both engines give
// the same results for every benchmarked operation; the benchmarks report
// ns/op, B/op and allocs/op per operation and engine, named
// BenchmarkLua/op=OP/engine=ENGINE so that benchstat can put the engines side
// by side (`make bench-lua`).
package luabench
