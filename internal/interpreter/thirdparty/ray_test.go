package thirdparty_test

import configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"

func init() {
	for target, ops := range map[string][]configv1alpha1.InterpreterOperation{
		"ray.io/v1/RayCluster": {component, aggregate, health},
		"ray.io/v1/RayJob":     {component, aggregate, health, dependency},
		"ray.io/v1/RayService": {replica, revise, aggregate, health, dependency},
	} {
		wantOperations[target] = ops
	}
}
