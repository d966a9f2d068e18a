package luabench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	karmadaluavm "github.com/karmada-io/karmada/pkg/resourceinterpreter/customized/declarative/luavm"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/conformance"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// karmadaPoolSize is the number of pooled states Karmada's configurable
// interpreter gives its VM (configurable.go: luavm.New(false, 10)).
const karmadaPoolSize = 10

// engines are the two VMs under test, built once per test binary like a
// long-running controller builds them.
type engines struct {
	tether  *luavm.VM
	karmada *karmadaluavm.VM
}

// benchTimeout replaces Tether's 1 s per-call deadline here: on a loaded
// machine a call can wait longer than that for a CPU, and the benchmark must
// measure, not fail. The deadline costs the same whatever its value.
const benchTimeout = time.Minute

func newEngines() engines {
	limits := luavm.DefaultLimits()
	limits.Timeout = benchTimeout
	return engines{
		tether:  luavm.New(luavm.Options{Limits: limits}),
		karmada: karmadaluavm.New(false, karmadaPoolSize),
	}
}

// fixture is one benchmarked operation: a script of the Workload
// customization and a conformance case's inputs.
type fixture struct {
	script string
	c      conformance.Case
	// karmadaItems are c.StatusItems as Karmada's type.
	karmadaItems []workv1alpha2.AggregatedStatusItem
}

// operation runs one hook through either engine. Each returns the hook's
// results as a JSON-shaped value, so that the engines can be compared.
type operation struct {
	name    string
	caseDir string
	hook    func(configv1alpha1.CustomizationRules) string
	tether  func(ctx context.Context, vm *luavm.VM, f *fixture) (any, error)
	karmada func(vm *karmadaluavm.VM, f *fixture) (any, error)
}

var operations = []operation{
	{
		name:    "Retain",
		caseDir: "retain-01-paused-and-status-from-observed",
		hook:    func(r configv1alpha1.CustomizationRules) string { return r.Retention.LuaScript },
		tether: func(ctx context.Context, vm *luavm.VM, f *fixture) (any, error) {
			return objectResult(vm.Retain(ctx, f.c.Desired, f.c.Observed, f.script))
		},
		karmada: func(vm *karmadaluavm.VM, f *fixture) (any, error) {
			return objectResult(vm.Retain(f.c.Desired, f.c.Observed, f.script))
		},
	},
	{
		name:    "GetReplicas",
		caseDir: "interpretreplica-01-requirements-from-template",
		hook:    func(r configv1alpha1.CustomizationRules) string { return r.ReplicaResource.LuaScript },
		tether: func(ctx context.Context, vm *luavm.VM, f *fixture) (any, error) {
			n, req, err := vm.GetReplicas(ctx, f.c.Object(), f.script)
			return replicasResult(n, req, err)
		},
		karmada: func(vm *karmadaluavm.VM, f *fixture) (any, error) {
			n, req, err := vm.GetReplicas(f.c.Object(), f.script)
			return replicasResult(n, req, err)
		},
	},
	{
		name:    "ReviseReplica",
		caseDir: "revisereplica-03-keeps-empty-fields-from-input",
		hook:    func(r configv1alpha1.CustomizationRules) string { return r.ReplicaRevision.LuaScript },
		tether: func(ctx context.Context, vm *luavm.VM, f *fixture) (any, error) {
			return objectResult(vm.ReviseReplica(ctx, f.c.Object(), f.c.Replicas, f.script))
		},
		karmada: func(vm *karmadaluavm.VM, f *fixture) (any, error) {
			return objectResult(vm.ReviseReplica(f.c.Object(), f.c.Replicas, f.script))
		},
	},
	{
		name:    "AggregateStatus",
		caseDir: "aggregatestatus-01-two-clusters-all-observed",
		hook:    func(r configv1alpha1.CustomizationRules) string { return r.StatusAggregation.LuaScript },
		tether: func(ctx context.Context, vm *luavm.VM, f *fixture) (any, error) {
			return objectResult(vm.AggregateStatus(ctx, f.c.Object(), f.c.StatusItems, f.script))
		},
		karmada: func(vm *karmadaluavm.VM, f *fixture) (any, error) {
			return objectResult(vm.AggregateStatus(f.c.Object(), f.karmadaItems, f.script))
		},
	},
	{
		name:    "InterpretHealth",
		caseDir: "interprethealth-01-healthy",
		hook:    func(r configv1alpha1.CustomizationRules) string { return r.HealthInterpretation.LuaScript },
		tether: func(ctx context.Context, vm *luavm.VM, f *fixture) (any, error) {
			return vm.InterpretHealth(ctx, f.c.Object(), f.script)
		},
		karmada: func(vm *karmadaluavm.VM, f *fixture) (any, error) {
			return vm.InterpretHealth(f.c.Object(), f.script)
		},
	},
	{
		name:    "ReflectStatus",
		caseDir: "interpretstatus-01-reflect-selected-fields",
		hook:    func(r configv1alpha1.CustomizationRules) string { return r.StatusReflection.LuaScript },
		tether: func(ctx context.Context, vm *luavm.VM, f *fixture) (any, error) {
			s, err := vm.ReflectStatus(ctx, f.c.Object(), f.script)
			if err != nil {
				return nil, err
			}
			return json.RawMessage(s.Raw), nil
		},
		karmada: func(vm *karmadaluavm.VM, f *fixture) (any, error) {
			s, err := vm.ReflectStatus(f.c.Object(), f.script)
			if err != nil {
				return nil, err
			}
			return json.RawMessage(s.Raw), nil
		},
	},
	{
		name:    "GetDependencies",
		caseDir: "interpretdependency-01-all-reference-kinds",
		hook:    func(r configv1alpha1.CustomizationRules) string { return r.DependencyInterpretation.LuaScript },
		tether: func(ctx context.Context, vm *luavm.VM, f *fixture) (any, error) {
			return vm.GetDependencies(ctx, f.c.Object(), f.script)
		},
		karmada: func(vm *karmadaluavm.VM, f *fixture) (any, error) {
			// Karmada's configurable interpreter deduplicates and sorts
			// after its VM returns; Tether's VM does it itself.
			return vm.GetDependencies(f.c.Object(), f.script)
		},
	},
}

func objectResult(obj *unstructured.Unstructured, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return obj.Object, nil
}

func replicasResult(n int32, requires any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return map[string]any{"replica": n, "requires": requires}, nil
}

// loadFixture reads op's script from the Workload customization and its
// case's inputs.
func loadFixture(tb testing.TB, op operation) *fixture {
	tb.Helper()
	root := conformance.Root()
	data, err := os.ReadFile(filepath.Join(root, "customizations", "workload.yaml"))
	if err != nil {
		tb.Fatalf("read customization: %v", err)
	}
	cs, err := interpreter.DecodeCustomizations(data)
	if err != nil {
		tb.Fatalf("decode customization: %v", err)
	}
	if len(cs) != 1 {
		tb.Fatalf("workload.yaml holds %d customizations, want 1", len(cs))
	}
	c, err := conformance.Load(root, filepath.Join(root, "cases", "workload", op.caseDir))
	if err != nil {
		tb.Fatalf("load case %s: %v", op.caseDir, err)
	}
	f := &fixture{script: op.hook(cs[0].Spec.Customizations), c: c}
	if c.StatusItems != nil {
		raw, err := json.Marshal(c.StatusItems)
		if err != nil {
			tb.Fatalf("marshal status items: %v", err)
		}
		if err := json.Unmarshal(raw, &f.karmadaItems); err != nil {
			tb.Fatalf("convert status items to Karmada's type: %v", err)
		}
	}
	return f
}

// canonical is v as JSON, with the elements of a top-level list sorted, so
// that results the engines order differently (dependencies) compare equal.
func canonical(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("marshal result: %w", err)
	}
	var list []json.RawMessage
	if json.Unmarshal(data, &list) != nil {
		return string(data), nil
	}
	elems := make([]string, len(list))
	for i, e := range list {
		elems[i] = string(e)
	}
	sort.Strings(elems)
	out, err := json.Marshal(elems)
	if err != nil {
		return "", fmt.Errorf("marshal sorted result: %w", err)
	}
	return string(out), nil
}
