package thirdparty_test

import configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"

// The Flux kinds (flux/*.yaml), with the operations interpreter-spec §11
// lists for them.
func init() {
	for target, ops := range map[string][]configv1alpha1.InterpreterOperation{
		"helm.toolkit.fluxcd.io/v2beta1/HelmRelease":      {retain, status, aggregate, health, dependency},
		"kustomize.toolkit.fluxcd.io/v1/Kustomization":    {retain, status, aggregate, health, dependency},
		"source.toolkit.fluxcd.io/v1/GitRepository":       {retain, status, aggregate, health, dependency},
		"source.toolkit.fluxcd.io/v1beta2/Bucket":         {retain, status, aggregate, health, dependency},
		"source.toolkit.fluxcd.io/v1beta2/HelmChart":      {retain, status, aggregate, health, dependency},
		"source.toolkit.fluxcd.io/v1beta2/HelmRepository": {retain, status, aggregate, health, dependency},
		"source.toolkit.fluxcd.io/v1beta2/OCIRepository":  {retain, status, aggregate, health, dependency},
	} {
		wantOperations[target] = ops
	}
}
