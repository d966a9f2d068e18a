package native

import (
	"fmt"
	"testing"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/conformance"
)

// resourceQuotaEstimate is the Karmada feature gate some cases turn on.
const resourceQuotaEstimate = "ResourceQuotaEstimate"

// TestConformance runs every native case of the suite.
func TestConformance(t *testing.T) {
	cases, err := conformance.LoadAll(conformance.Root())
	if err != nil {
		t.Fatalf("LoadAll: %v", err)
	}
	ran := 0
	for _, c := range cases {
		if c.Interpreter != conformance.Native {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			if reason := c.SkipReason(); reason != "" {
				t.Skip(reason)
			}
			ipt := New(WithResourceQuotaEstimate(c.FeatureGate(resourceQuotaEstimate)))
			if err := c.CheckEnabled(ipt.HookEnabled(c.Target, c.Operation)); err != nil {
				t.Errorf("HookEnabled(%s, %s): %v", c.Target, c.Operation, err)
			}
			got, gotErr := run(ipt, c)
			if err := conformance.Compare(c, got, gotErr); err != nil {
				t.Errorf("%s: %s\n%v", c.Operation, c.Description, err)
			}
		})
	}
	if ran == 0 {
		t.Fatal("no native cases found")
	}
}

// run calls the case's operation once and returns its results.
func run(ipt *Interpreter, c conformance.Case) (conformance.Results, error) {
	obj := c.Object().DeepCopy()
	switch c.Operation {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		replicas, requires, err := ipt.GetReplicas(obj)
		if err != nil {
			return nil, err
		}
		return conformance.ReplicaResults(replicas, requires)
	case configv1alpha1.InterpreterOperationReviseReplica:
		revised, err := ipt.ReviseReplica(obj, c.Replicas)
		return conformance.RevisedResults(revised), err
	case configv1alpha1.InterpreterOperationRetain:
		retained, err := ipt.Retain(c.Desired.DeepCopy(), c.Observed.DeepCopy())
		return conformance.RetainedResults(retained), err
	case configv1alpha1.InterpreterOperationAggregateStatus:
		aggregated, err := ipt.AggregateStatus(obj, c.StatusItems)
		return conformance.AggregatedStatusResults(aggregated), err
	case configv1alpha1.InterpreterOperationInterpretStatus:
		status, err := ipt.ReflectStatus(obj)
		if err != nil {
			return nil, err
		}
		return conformance.StatusResults(status)
	case configv1alpha1.InterpreterOperationInterpretHealth:
		healthy, err := ipt.InterpretHealth(obj)
		return conformance.HealthResults(healthy), err
	case configv1alpha1.InterpreterOperationInterpretDependency:
		deps, err := ipt.GetDependencies(obj)
		if err != nil {
			return nil, err
		}
		return conformance.DependencyResults(deps)
	}
	return nil, fmt.Errorf("operation %q has no native runner", c.Operation)
}
