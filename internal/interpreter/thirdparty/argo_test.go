package thirdparty_test

import configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"

func init() {
	for target, ops := range map[string][]configv1alpha1.InterpreterOperation{
		"argoproj.io/v1alpha1/Workflow": {retain, replica, revise, health, dependency},
	} {
		wantOperations[target] = ops
	}
}
