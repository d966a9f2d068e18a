package thirdparty_test

import configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"

func init() {
	for target, ops := range map[string][]configv1alpha1.InterpreterOperation{
		"apps.kruise.io/v1alpha1/AdvancedCronJob":  {aggregate, dependency},
		"apps.kruise.io/v1alpha1/BroadcastJob":     {retain, replica, revise, status, aggregate, health, dependency},
		"apps.kruise.io/v1alpha1/CloneSet":         {retain, replica, revise, status, aggregate, health, dependency}, // Retain: a Tether addition
		"apps.kruise.io/v1alpha1/DaemonSet":        {status, aggregate, health, dependency},
		"apps.kruise.io/v1alpha1/SidecarSet":       {retain, replica, status, aggregate, health, dependency},
		"apps.kruise.io/v1alpha1/UnitedDeployment": {replica, revise, status, aggregate, health, dependency},
		"apps.kruise.io/v1beta1/StatefulSet":       {retain, replica, revise, status, aggregate, health, dependency}, // Retain: a Tether addition
	} {
		wantOperations[target] = ops
	}
}
