package thirdparty_test

import configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"

func init() {
	for target, ops := range map[string][]configv1alpha1.InterpreterOperation{
		"kyverno.io/v1/ClusterPolicy": {status, aggregate, health},
		"kyverno.io/v1/Policy":        {status, aggregate, health},
	} {
		wantOperations[target] = ops
	}
}
