package overrides

import (
	"errors"
	"strings"
	"testing"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// The tests of this file pin the behaviours listed in README.md under
// "Where Tether differs from Karmada".

// TestDiffersErrorsInsteadOfPanics: inputs on which Karmada panics give an
// *Error naming the overrider.
func TestDiffersErrorsInsteadOfPanics(t *testing.T) {
	bad := `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  template:
    spec:
      containers:
      - {name: web, image: nginx, command: "not a list"}
      - just-a-string
`
	tests := []struct {
		name, overrider, says string
		o                     policyv1alpha1.Overriders
	}{
		{"command not a list", "commandOverrider[0]", "/spec/template/spec/containers/0/command is string, not a list",
			policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "web", Operator: add, Value: []string{"x"}}}}},
		{"container not an object", "argsOverrider[0]", "/spec/template/spec/containers/1 is string, not a container",
			policyv1alpha1.Overriders{ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{{ContainerName: "x", Operator: add}}}},
		{"predicate index past the end", "imageOverrider[0]", "index 7 out of range",
			policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Tag, Operator: replace,
				Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/7/image"}}}}},
		{"predicate into a non-object", "imageOverrider[0]", "is not map",
			policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Tag, Operator: replace,
				Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/1/image"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Apply(object(t, bad), testCluster(), nil, []policyv1alpha1.OverridePolicy{op("p", nil, tt.o)})
			var e *Error
			if !errors.As(err, &e) || e.Overrider != tt.overrider || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Apply error = %v; want an *Error for %s saying %q", err, tt.overrider, tt.says)
			}
		})
	}
}

// TestDiffersUntypedContainers: a workload with a field of the wrong type
// elsewhere (Karmada: "failed to convert Deployment") is still overridden.
func TestDiffersUntypedContainers(t *testing.T) {
	obj := object(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: "3"
  template:
    spec:
      containers: [{name: web, image: nginx:1}]
`)
	o := policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: replace, Value: "r.io"}}}
	res, err := Apply(obj, testCluster(), nil, []policyv1alpha1.OverridePolicy{op("p", nil, o)})
	if err != nil {
		t.Fatalf("Apply error = %v; want nil", err)
	}
	if got := field(t, res.Object, "/spec/template/spec/containers/0/image"); got != `"r.io/nginx:1"` {
		t.Errorf("Apply image = %s; want \"r.io/nginx:1\"", got)
	}
}

// TestDiffersAppliedRecordsOmitNullValue: a plaintext item without value is
// recorded without "value" (Karmada: "value": null).
func TestDiffersAppliedRecordsOmitNullValue(t *testing.T) {
	res := &Result{Overrides: []Applied{{PolicyName: "p", Overriders: policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{{Operator: remove, Path: "/x"}}}}}}
	got, err := res.Annotations()
	if err != nil {
		t.Fatalf("Annotations error = %v", err)
	}
	want := `[{"policyName":"p","overriders":{"plaintext":[{"path":"/x","operator":"remove"}]}}]`
	if got[AnnotationAppliedOverrides] != want {
		t.Errorf("Annotations()[%s] = %s; want %s", AnnotationAppliedOverrides, got[AnnotationAppliedOverrides], want)
	}
}
