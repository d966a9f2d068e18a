package ctl

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/conformance"
)

// operations are the operations interpret runs, in Karmada's order.
var operations = []configv1alpha1.InterpreterOperation{
	configv1alpha1.InterpreterOperationInterpretReplica,
	configv1alpha1.InterpreterOperationInterpretComponent,
	configv1alpha1.InterpreterOperationReviseReplica,
	configv1alpha1.InterpreterOperationRetain,
	configv1alpha1.InterpreterOperationAggregateStatus,
	configv1alpha1.InterpreterOperationInterpretStatus,
	configv1alpha1.InterpreterOperationInterpretHealth,
	configv1alpha1.InterpreterOperationInterpretDependency,
}

// interpretInput is what one operation reads.
type interpretInput struct {
	desired, observed *unstructured.Unstructured
	items             []configv1alpha1.AggregatedStatusItem
	replicas          int64
}

// interpret reads the inputs, builds the interpreter chain and runs the
// operation. The operation is returned even on error, for the report.
func interpret(ctx context.Context, f interpretFlags, replicasSet bool) (configv1alpha1.InterpreterOperation, map[string]any, error) {
	op, err := canonicalOperation(f.operation)
	if err != nil {
		return configv1alpha1.InterpreterOperation(f.operation), nil, err
	}
	in, err := readInputs(f, op, replicasSet)
	if err != nil {
		return op, nil, err
	}
	ipt, err := newInterpreter(f.customization)
	if err != nil {
		return op, nil, err
	}
	results, err := runOperation(ctx, ipt, op, in)
	return op, results, err
}

// newInterpreter is the hub's chain: the given customization file as the
// hub's RICs (none if empty), no webhooks, the built-in customizations and
// the native rules.
func newInterpreter(customizationFile string) (*interpreter.Interpreter, error) {
	ipt, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		return nil, fmt.Errorf("build interpreter: %w", err)
	}
	if customizationFile != "" {
		cs, err := readCustomizations(customizationFile)
		if err != nil {
			return nil, err
		}
		ipt.LoadCustomizations(cs)
	}
	return ipt, nil
}

// runOperation calls the operation and returns its results by Karmada's
// result names.
func runOperation(ctx context.Context, ipt *interpreter.Interpreter, op configv1alpha1.InterpreterOperation, in interpretInput) (conformance.Results, error) {
	obj := in.subject(op)
	switch op {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		r, req, err := ipt.GetReplicas(ctx, obj)
		if err != nil {
			return nil, err
		}
		return conformance.ReplicaResults(r, req)
	case configv1alpha1.InterpreterOperationInterpretComponent:
		comps, err := ipt.GetComponents(ctx, obj)
		if err != nil {
			return nil, err
		}
		return conformance.ComponentResults(comps)
	case configv1alpha1.InterpreterOperationReviseReplica:
		out, err := ipt.ReviseReplica(ctx, obj, in.replicas)
		return conformance.RevisedResults(out), err
	case configv1alpha1.InterpreterOperationRetain:
		out, err := ipt.Retain(ctx, in.desired, in.observed)
		return conformance.RetainedResults(out), err
	case configv1alpha1.InterpreterOperationAggregateStatus:
		out, err := ipt.AggregateStatus(ctx, obj, in.items)
		return conformance.AggregatedStatusResults(out), err
	case configv1alpha1.InterpreterOperationInterpretStatus:
		status, err := ipt.ReflectStatus(ctx, obj)
		if err != nil {
			return nil, err
		}
		return conformance.StatusResults(status)
	case configv1alpha1.InterpreterOperationInterpretHealth:
		healthy, err := ipt.InterpretHealth(ctx, obj)
		return conformance.HealthResults(healthy), err
	case configv1alpha1.InterpreterOperationInterpretDependency:
		deps, err := ipt.GetDependencies(ctx, obj)
		if err != nil {
			return nil, err
		}
		return conformance.DependencyResults(deps)
	}
	return nil, fmt.Errorf("operation %s cannot be run", op)
}

// subject is the object a single-object operation works on: the observed
// object for the operations that look at a member's copy, else the desired
// one; whichever was given when only one was.
func (in interpretInput) subject(op configv1alpha1.InterpreterOperation) *unstructured.Unstructured {
	first, second := in.desired, in.observed
	if op == configv1alpha1.InterpreterOperationInterpretStatus || op == configv1alpha1.InterpreterOperationInterpretHealth {
		first, second = second, first
	}
	if first != nil {
		return first
	}
	return second
}
