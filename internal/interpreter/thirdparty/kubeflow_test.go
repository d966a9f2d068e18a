package thirdparty_test

import configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"

func init() {
	for target, ops := range map[string][]configv1alpha1.InterpreterOperation{
		"kubeflow.org/v1/Notebook":    {replica, status, aggregate, health},
		"kubeflow.org/v1/PyTorchJob":  {component, aggregate, health, dependency},
		"kubeflow.org/v1/TFJob":       {component, aggregate, health, dependency},
		"kubeflow.org/v2beta1/MPIJob": {component, status, aggregate, health},
	} {
		wantOperations[target] = ops
	}
}
