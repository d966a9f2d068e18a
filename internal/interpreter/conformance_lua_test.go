package interpreter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/conformance"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// TestLuaConformance runs every "lua" case of the conformance suite through
// the Lua (RIC) interpreter and compares with Karmada's output.
func TestLuaConformance(t *testing.T) {
	root := conformance.Root()
	cases, err := conformance.LoadAll(root)
	if err != nil {
		t.Fatalf("LoadAll(%s): %v", root, err)
	}
	ran := 0
	for _, c := range cases {
		if c.Interpreter != conformance.Lua {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			if r := c.SkipReason(); r != "" {
				t.Skip(r)
			}
			t.Parallel()
			ipt, err := luaInterpreterFor(root, c)
			if err != nil {
				t.Fatal(err)
			}
			enabled := ipt.HookEnabled(c.Target, c.Operation)
			if err := c.CheckEnabled(enabled); err != nil {
				t.Fatal(err)
			}
			got, gotErr := runLuaCase(context.Background(), ipt, c)
			if err := conformance.Compare(c, got, gotErr); err != nil {
				t.Fatalf("%s (%s): %v", c.Name, c.Description, err)
			}
		})
	}
	if ran == 0 {
		t.Fatal("no lua cases found")
	}
}

func luaInterpreterFor(root string, c conformance.Case) (*LuaInterpreter, error) {
	path := c.Customization
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cs, err := DecodeCustomizations(data)
	if err != nil {
		return nil, err
	}
	vm := luavm.New(luavm.Options{
		Limits:                luavm.DefaultLimits(),
		ResourceQuotaEstimate: c.FeatureGate("ResourceQuotaEstimate"),
	})
	ipt := NewLuaInterpreter(vm)
	ipt.Load(cs)
	return ipt, nil
}

var errNotEnabled = errors.New("rule is not enabled")

// runLuaCase calls the case's operation once and shapes the results as the
// oracle does.
func runLuaCase(ctx context.Context, ipt *LuaInterpreter, c conformance.Case) (conformance.Results, error) {
	obj := c.Object()
	switch c.Operation {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		r, req, ok, err := ipt.GetReplicas(ctx, obj)
		if err := check(ok, err); err != nil {
			return nil, err
		}
		return conformance.ReplicaResults(r, req)
	case configv1alpha1.InterpreterOperationInterpretComponent:
		comps, ok, err := ipt.GetComponents(ctx, obj)
		if err := check(ok, err); err != nil {
			return nil, err
		}
		return conformance.ComponentResults(comps)
	case configv1alpha1.InterpreterOperationReviseReplica:
		out, ok, err := ipt.ReviseReplica(ctx, obj, c.Replicas)
		if err := check(ok, err); err != nil {
			return nil, err
		}
		return conformance.RevisedResults(out), nil
	case configv1alpha1.InterpreterOperationRetain:
		out, ok, err := ipt.Retain(ctx, c.Desired, c.Observed)
		if err := check(ok, err); err != nil {
			return nil, err
		}
		return conformance.RetainedResults(out), nil
	case configv1alpha1.InterpreterOperationAggregateStatus:
		out, ok, err := ipt.AggregateStatus(ctx, obj, c.StatusItems)
		if err := check(ok, err); err != nil {
			return nil, err
		}
		return conformance.AggregatedStatusResults(out), nil
	case configv1alpha1.InterpreterOperationInterpretStatus:
		out, ok, err := ipt.ReflectStatus(ctx, obj)
		if err := check(ok, err); err != nil {
			return nil, err
		}
		return conformance.StatusResults(out)
	case configv1alpha1.InterpreterOperationInterpretHealth:
		h, ok, err := ipt.InterpretHealth(ctx, obj)
		if err := check(ok, err); err != nil {
			return nil, err
		}
		return conformance.HealthResults(h), nil
	case configv1alpha1.InterpreterOperationInterpretDependency:
		deps, ok, err := ipt.GetDependencies(ctx, obj)
		if err := check(ok, err); err != nil {
			return nil, err
		}
		return conformance.DependencyResults(deps)
	}
	return nil, fmt.Errorf("unknown operation %q", c.Operation)
}

func check(enabled bool, err error) error {
	if !enabled {
		return errNotEnabled
	}
	return err
}
