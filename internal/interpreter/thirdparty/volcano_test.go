package thirdparty_test

import configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"

func init() {
	for target, ops := range map[string][]configv1alpha1.InterpreterOperation{
		"batch.volcano.sh/v1alpha1/Job": {component, status, aggregate, health},
	} {
		wantOperations[target] = ops
	}
}
