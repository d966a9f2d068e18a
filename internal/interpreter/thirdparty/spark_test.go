package thirdparty_test

import configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"

func init() {
	for target, ops := range map[string][]configv1alpha1.InterpreterOperation{
		"sparkoperator.k8s.io/v1beta2/SparkApplication": {component, status, aggregate, health},
	} {
		wantOperations[target] = ops
	}
}
