package overrides

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

var (
	byName  = []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}
	byLabel = []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	byKind  = []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}
	noMatch = []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "other"}}
)

// appliedNames lists the policy names of applied rules, in order.
func appliedNames(applied []Applied) []string {
	var names []string
	for _, a := range applied {
		names = append(names, a.PolicyName)
	}
	return names
}

func TestApplyOrder(t *testing.T) {
	cops := []policyv1alpha1.ClusterOverridePolicy{
		cop("z-cop-name", byName, annotate("winner", "z-cop-name")),
		cop("a-cop-all", nil, annotate("winner", "a-cop-all")),
		cop("m-cop-kind", byKind, annotate("winner", "m-cop-kind")),
		cop("cop-nomatch", noMatch, annotate("winner", "cop-nomatch")),
	}
	ops := []policyv1alpha1.OverridePolicy{
		op("a-op-name", byName, annotate("winner", "a-op-name")),
		op("b-op-label", byLabel, annotate("winner", "b-op-label")),
		op("d-op-none", nil, annotate("winner", "d-op-none")),
		op("c-op-kind", byKind, annotate("winner", "c-op-kind")),
		op("op-nomatch", noMatch, annotate("winner", "op-nomatch")),
	}
	other := op("e-other-ns", nil, annotate("winner", "other-ns"))
	other.Namespace = "kube-public"
	ops = append(ops, other)

	res, err := Apply(object(t, deploymentYAML), testCluster(), cops, ops)
	if err != nil {
		t.Fatalf("Apply error = %v", err)
	}
	if got, want := appliedNames(res.ClusterOverrides), []string{"a-cop-all", "m-cop-kind", "z-cop-name"}; !cmp.Equal(got, want) {
		t.Errorf("Apply cluster overrides order = %v; want %v", got, want)
	}
	// match-all (no selectors or kind only) by name, then labelSelector, then name.
	if got, want := appliedNames(res.Overrides), []string{"c-op-kind", "d-op-none", "b-op-label", "a-op-name"}; !cmp.Equal(got, want) {
		t.Errorf("Apply overrides order = %v; want %v", got, want)
	}
	if got := res.Object.GetAnnotations()["winner"]; got != "a-op-name" {
		t.Errorf("Apply winner = %q; want a-op-name (most specific OverridePolicy, applied last)", got)
	}
}

func TestApplyRulesAndTargetCluster(t *testing.T) {
	m1, m2 := &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}, &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m2"}}
	p := op("p", nil, policyv1alpha1.Overriders{})
	p.Spec.OverrideRules = []policyv1alpha1.RuleWithCluster{
		{TargetCluster: m1, Overriders: annotate("r", "0")},
		{TargetCluster: m2, Overriders: annotate("r", "1")},
		{Overriders: annotate("r", "2")},
		{TargetCluster: m1, Overriders: annotate("last", "3")},
	}
	res, err := Apply(object(t, deploymentYAML), testCluster(), nil, []policyv1alpha1.OverridePolicy{p})
	if err != nil {
		t.Fatalf("Apply error = %v", err)
	}
	want := map[string]string{"r": "2", "last": "3"}
	if diff := cmp.Diff(want, res.Object.GetAnnotations()); diff != "" {
		t.Errorf("Apply annotations (-want +got):\n%s", diff)
	}
	if got := len(res.Overrides); got != 3 {
		t.Errorf("Apply recorded %d rules; want 3 (one per applied rule)", got)
	}
}

func TestApplyLegacyRule(t *testing.T) {
	p := op("legacy", byName, policyv1alpha1.Overriders{})
	p.Spec.OverrideRules = nil
	p.Spec.TargetCluster = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}
	p.Spec.Overriders = annotate("legacy", "yes")
	res, err := Apply(object(t, deploymentYAML), testCluster(), nil, []policyv1alpha1.OverridePolicy{p})
	if err != nil {
		t.Fatalf("Apply error = %v", err)
	}
	if got := res.Object.GetAnnotations()["legacy"]; got != "yes" {
		t.Errorf("Apply legacy annotation = %q; want yes", got)
	}
	p.Spec.TargetCluster.ClusterNames = []string{"m2"}
	if res, _ = Apply(object(t, deploymentYAML), testCluster(), nil, []policyv1alpha1.OverridePolicy{p}); len(res.Overrides) != 0 {
		t.Errorf("Apply legacy rule for another cluster applied %v; want nothing", res.Overrides)
	}
}

func TestApplyClusterScopedSkipsOverridePolicies(t *testing.T) {
	ns := object(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n")
	res, err := Apply(ns, testCluster(),
		[]policyv1alpha1.ClusterOverridePolicy{cop("c", nil, annotate("c", "1"))},
		[]policyv1alpha1.OverridePolicy{op("o", nil, annotate("o", "1"))})
	if err != nil {
		t.Fatalf("Apply error = %v", err)
	}
	if diff := cmp.Diff(map[string]string{"c": "1"}, res.Object.GetAnnotations()); diff != "" {
		t.Errorf("Apply annotations (-want +got):\n%s", diff)
	}
}

func TestApplyDoesNotModifyTemplate(t *testing.T) {
	tmpl := object(t, deploymentYAML)
	before := tmpl.DeepCopy()
	o := policyv1alpha1.Overriders{
		LabelsOverrider:      []policyv1alpha1.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"x": "1"}}},
		AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"x": "1"}}},
		ImageOverrider:       []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Registry, Operator: replace, Value: "r.io"}},
	}
	if _, err := Apply(tmpl, testCluster(), nil, []policyv1alpha1.OverridePolicy{op("p", nil, o)}); err != nil {
		t.Fatalf("Apply error = %v", err)
	}
	if diff := cmp.Diff(before.Object, tmpl.Object); diff != "" {
		t.Errorf("Apply modified the template (-before +after):\n%s", diff)
	}
}

func TestApplyErrors(t *testing.T) {
	plain := func(o policyv1alpha1.OverriderOperator, path, v string) policyv1alpha1.PlaintextOverrider {
		return policyv1alpha1.PlaintextOverrider{Operator: o, Path: path, Value: json.RawMessage(v)}
	}
	fieldYAML := policyv1alpha1.FieldOverrider{FieldPath: "/metadata/annotations/cfg",
		YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/a", Operator: add, Value: json.RawMessage(`1`)}}}
	withCfg := func(v string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{
			AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"cfg": v}}},
			FieldOverrider:       []policyv1alpha1.FieldOverrider{fieldYAML},
		}
	}
	tests := []struct {
		name      string
		o         policyv1alpha1.Overriders
		overrider string
		says      string
	}{
		{"replace of a missing path", policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			plain(replace, "/spec/replicas", "1"), plain(replace, "/spec/template/spec/hostNetwork", "true")}},
			"plaintext[1]", "replace operation does not apply: doc is missing key: /spec/template/spec/hostNetwork"},
		{"remove of a missing path", policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{plain(remove, "/spec/paused", "")}},
			"plaintext[0]", "remove /spec/paused"},
		{"bad JSON pointer index", policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			plain(replace, "/spec/template/spec/containers/abc/image", `"x"`)}},
			"plaintext[0]", "replace /spec/template/spec/containers/abc/image: replace operation does not apply: doc is missing path"},
		{"bad JSON pointer in fieldPath", policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "metadata/name",
			JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: add}}}}},
			"fieldOverrider[0]", `get fieldPath "metadata/name": JSON pointer must be empty or start with a "/"`},
		{"unsupported operator", policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			plain(add, "/spec/x", "1"), plain("move", "/spec/y", "1")}},
			"plaintext[1]", "move /spec/y: invalid operation"},
		{"add under a missing parent", policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{plain(add, "/spec/a/b", "1")}},
			"plaintext[0]", "add /spec/a/b"},
		{"invalid embedded YAML", withCfg("a: [unclosed"), "fieldOverrider[0]", `patch yaml at fieldPath "/metadata/annotations/cfg"`},
		{"invalid embedded JSON", policyv1alpha1.Overriders{
			AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"cfg": "{"}}},
			FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/metadata/annotations/cfg",
				JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: add, Value: json.RawMessage(`1`)}}}}},
			"fieldOverrider[0]", `patch json at fieldPath "/metadata/annotations/cfg": invalid state detected`},
		{"fieldPath not a string", policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/spec/replicas",
			JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: add}}}}}, "fieldOverrider[0]", `"/spec/replicas" is int64, not a string`},
		{"fieldPath missing", policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/x",
			JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/a", Operator: add}}}}}, "fieldOverrider[0]", `object has no key "data"`},
		{"unparsable image", policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Component: policyv1alpha1.Tag, Operator: replace, Value: "x", Predicate: &policyv1alpha1.ImagePredicate{Path: "/metadata/name"}},
			{Component: policyv1alpha1.Tag, Operator: replace, Value: "x", Predicate: &policyv1alpha1.ImagePredicate{Path: "/metadata/labels/app"}},
			{Component: policyv1alpha1.Tag, Operator: replace, Value: "x", Predicate: &policyv1alpha1.ImagePredicate{Path: "/kind"}}}},
			"imageOverrider[2]", "failed to parse image value(Deployment), error: repository name must be lowercase"},
		{"predicate path missing", policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Component: policyv1alpha1.Tag, Operator: replace, Predicate: &policyv1alpha1.ImagePredicate{Path: "/spec/template/spec/containers/5/image"}}}},
			"imageOverrider[0]", "failed to obtain imageValue with predicate path(/spec/template/spec/containers/5/image)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Apply(object(t, deploymentYAML), testCluster(), nil, []policyv1alpha1.OverridePolicy{op("bad", nil, tt.o)})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Apply error = %v; want *Error", err)
			}
			if e.Kind != "OverridePolicy" || e.Policy != "default/bad" || e.Rule != 0 || e.Overrider != tt.overrider {
				t.Errorf("Apply error names %s %s rule %d %s; want OverridePolicy default/bad rule 0 %s", e.Kind, e.Policy, e.Rule, e.Overrider, tt.overrider)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Apply error = %q; want it to say %q", err, tt.says)
			}
		})
	}
}

func TestApplyErrorStopsEverything(t *testing.T) {
	bad := cop("bad", nil, policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
		{Operator: remove, Path: "/nope"}}})
	res, err := Apply(object(t, deploymentYAML), testCluster(), []policyv1alpha1.ClusterOverridePolicy{bad},
		[]policyv1alpha1.OverridePolicy{op("good", nil, annotate("a", "1"))})
	if err == nil || res != nil {
		t.Fatalf("Apply = %v, %v; want nil and an error", res, err)
	}
	if want := "overrides: apply ClusterOverridePolicy bad overrideRules[0] plaintext[0]: remove /nope:"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Apply error = %q; want prefix %q", err, want)
	}
}

func TestAnnotations(t *testing.T) {
	res := &Result{
		ClusterOverrides: []Applied{{PolicyName: "z"}, {PolicyName: "a", Overriders: annotate("k", "v")}},
	}
	got, err := res.Annotations()
	if err != nil {
		t.Fatalf("Annotations error = %v", err)
	}
	want := map[string]string{AnnotationAppliedClusterOverrides: `[{"policyName":"a","overriders":{"annotationsOverrider":[{"operator":"add","value":{"k":"v"}}]}},{"policyName":"z","overriders":{}}]`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Annotations (-want +got):\n%s", diff)
	}
}
