package v1alpha1

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func baseOP() *OverridePolicy {
	return &OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "op", Namespace: "default"},
		Spec: OverrideSpec{
			ResourceSelectors: []ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			OverrideRules: []RuleWithCluster{{
				TargetCluster: &ClusterAffinity{ClusterNames: []string{"m1"}},
				Overriders: Overriders{
					Plaintext: []PlaintextOverrider{{Path: "/spec/replicas", Operator: OverriderOpReplace, Value: json.RawMessage("3")}},
				},
			}},
		},
	}
}

// overriders returns the overriders of the first rule.
func overriders(p *OverridePolicy) *Overriders { return &p.Spec.OverrideRules[0].Overriders }

func TestValidateOverridePolicy(t *testing.T) {
	const rule = "spec.overrideRules[0].overriders"
	tests := []struct {
		name   string
		mutate func(*OverridePolicy)
		want   []string
		detail string
	}{
		{"valid", func(*OverridePolicy) {}, nil, ""},
		{"valid with every overrider", func(p *OverridePolicy) {
			o := overriders(p)
			o.ImageOverrider = []ImageOverrider{{Component: Registry, Operator: OverriderOpRemove},
				{Predicate: &ImagePredicate{Path: "/spec/x"}, Component: Tag, Operator: OverriderOpAdd, Value: "-x"}}
			o.CommandOverrider = []CommandArgsOverrider{{ContainerName: "c", Operator: OverriderOpAdd, Value: []string{"-v"}}}
			o.ArgsOverrider = []CommandArgsOverrider{{ContainerName: "c", Operator: OverriderOpRemove}}
			o.LabelsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"app.kubernetes.io/env": "prod"}}}
			o.AnnotationsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpRemove, Value: map[string]string{"old": ""}}}
			o.FieldOverrider = []FieldOverrider{{FieldPath: "/data/config", YAML: []YAMLPatchOperation{{SubPath: "/a", Operator: OverriderOpRemove}}}}
		}, nil, ""},
		{"deprecated form", func(p *OverridePolicy) {
			p.Spec.TargetCluster = &ClusterAffinity{ClusterNames: []string{"m1"}}
			p.Spec.Overriders, p.Spec.OverrideRules = p.Spec.OverrideRules[0].Overriders, nil
		}, nil, ""},
		{"rules with deprecated targetCluster", func(p *OverridePolicy) {
			p.Spec.TargetCluster = &ClusterAffinity{ClusterNames: []string{"m1"}}
		}, []string{"spec.overrideRules"}, "overrideRules and (overriders or targetCluster) can't co-exist"},
		{"rules with deprecated overriders", func(p *OverridePolicy) { p.Spec.Overriders = *overriders(p) },
			[]string{"spec.overrideRules"}, ""},
		{"deprecated targetCluster field selector", func(p *OverridePolicy) {
			p.Spec.OverrideRules = nil
			p.Spec.TargetCluster = &ClusterAffinity{FieldSelector: fieldSelector("foo", corev1.NodeSelectorOpIn)}
		}, []string{"spec.targetCluster.fieldSelector.matchExpressions[0].key"}, ""},
		{"rule targetCluster field selector operator", func(p *OverridePolicy) {
			p.Spec.OverrideRules[0].TargetCluster.FieldSelector = fieldSelector(RegionField, corev1.NodeSelectorOpGt)
		}, []string{"spec.overrideRules[0].targetCluster.fieldSelector.matchExpressions[0].operator"}, ""},
		{"selector in another namespace", func(p *OverridePolicy) { p.Spec.ResourceSelectors[0].Namespace = "kube-system" },
			[]string{"spec.resourceSelectors[0].namespace"}, ""},
		{"plaintext operator", func(p *OverridePolicy) { overriders(p).Plaintext[0].Operator = "update" },
			[]string{rule + ".plaintext[0].operator"}, `supported values: "add", "remove", "replace"`},
		{"plaintext without operator", func(p *OverridePolicy) { overriders(p).Plaintext[0].Operator = "" },
			[]string{rule + ".plaintext[0].operator"}, "Required"},
		{"image without component", func(p *OverridePolicy) {
			overriders(p).ImageOverrider = []ImageOverrider{{Operator: OverriderOpAdd, Value: "x"}}
		}, []string{rule + ".imageOverrider[0].component"}, "Required"},
		{"image component", func(p *OverridePolicy) {
			overriders(p).ImageOverrider = []ImageOverrider{{Component: "Digest", Operator: OverriderOpAdd}}
		}, []string{rule + ".imageOverrider[0].component"}, "Unsupported value"},
		{"image predicate without path", func(p *OverridePolicy) {
			overriders(p).ImageOverrider = []ImageOverrider{{Predicate: &ImagePredicate{}, Component: Tag, Operator: OverriderOpRemove}}
		}, []string{rule + ".imageOverrider[0].predicate.path"}, ""},
		{"command replace", func(p *OverridePolicy) {
			overriders(p).CommandOverrider = []CommandArgsOverrider{{ContainerName: "c", Operator: OverriderOpReplace}}
		}, []string{rule + ".commandOverrider[0].operator"}, `supported values: "add", "remove"`},
		{"args without container", func(p *OverridePolicy) {
			overriders(p).ArgsOverrider = []CommandArgsOverrider{{Operator: OverriderOpAdd}}
		}, []string{rule + ".argsOverrider[0].containerName"}, ""},
		{"label key", func(p *OverridePolicy) {
			overriders(p).LabelsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"testannotation~projectId": "x"}}}
		}, []string{rule + ".labelsOverrider[0].value"}, ""},
		{"label value", func(p *OverridePolicy) {
			overriders(p).LabelsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"a": "not valid!"}}}
		}, []string{rule + ".labelsOverrider[0].value"}, ""},
		{"annotation key", func(p *OverridePolicy) {
			overriders(p).AnnotationsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"testannotation~projectId": "x"}}}
		}, []string{rule + ".annotationsOverrider[0].value"}, ""},
		{"field overrider with JSON and YAML", func(p *OverridePolicy) {
			overriders(p).FieldOverrider = []FieldOverrider{{FieldPath: "/data/c",
				JSON: []JSONPatchOperation{{SubPath: "/a", Operator: OverriderOpRemove}},
				YAML: []YAMLPatchOperation{{SubPath: "/a", Operator: OverriderOpRemove}}}}
		}, []string{rule + ".fieldOverrider[0]"}, "Only one is allowed"},
		{"field overrider with neither", func(p *OverridePolicy) {
			overriders(p).FieldOverrider = []FieldOverrider{{FieldPath: "/data/c"}}
		}, []string{rule + ".fieldOverrider[0]"}, "must have either YAML or JSON set"},
		{"field overrider operation", func(p *OverridePolicy) {
			overriders(p).FieldOverrider = []FieldOverrider{{JSON: []JSONPatchOperation{{Operator: "move"}}}}
		}, []string{rule + ".fieldOverrider[0].fieldPath", rule + ".fieldOverrider[0].json[0].subPath",
			rule + ".fieldOverrider[0].json[0].operator"}, "Required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := baseOP()
			tt.mutate(p)
			assertErrors(t, tt.name, p.Validate(), tt.want, tt.detail)
		})
	}
}

func TestValidateClusterOverridePolicy(t *testing.T) {
	p := &ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "cop"}, Spec: baseOP().Spec}
	p.Spec.ResourceSelectors[0].Namespace = "any"
	assertErrors(t, "cluster override policy", p.Validate(), nil, "")
	p.Spec.OverrideRules[0].Overriders.Plaintext[0].Path = ""
	assertErrors(t, "cluster override policy without path", p.Validate(),
		[]string{"spec.overrideRules[0].overriders.plaintext[0].path"}, "Required")
}
