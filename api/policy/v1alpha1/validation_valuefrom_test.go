package v1alpha1

import (
	"encoding/json"
	"testing"
)

func TestValidateValueFrom(t *testing.T) {
	const rule = "spec.overrideRules[0].overriders"
	name := &ClusterValueSource{ClusterName: &ClusterNameSource{}}
	site := &ClusterValueSource{ClusterLabel: &ClusterKeySource{Key: "site"}}
	tests := []struct {
		name   string
		mutate func(*Overriders)
		want   []string
		detail string
	}{
		{"valid in every overrider", func(o *Overriders) {
			o.Plaintext = []PlaintextOverrider{{Path: "/metadata/name", Operator: OverriderOpReplace, ValueFrom: name}}
			o.ImageOverrider = []ImageOverrider{{Component: Tag, Operator: OverriderOpReplace, ValueFrom: site}}
			o.CommandOverrider = []CommandArgsOverrider{{ContainerName: "c", Operator: OverriderOpAdd, Value: []string{"--site"}, ValueFrom: []ClusterValueSource{*site}}}
			o.ArgsOverrider = []CommandArgsOverrider{{ContainerName: "c", Operator: OverriderOpRemove, ValueFrom: []ClusterValueSource{*name}}}
			o.LabelsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"a": "b"},
				ValueFrom: map[string]ClusterValueSource{"example.com/site": *site}}}
			o.AnnotationsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpReplace,
				ValueFrom: map[string]ClusterValueSource{"endpoint": {ClusterAnnotation: &ClusterKeySource{Key: "example.com/endpoint"}}}}}
			o.FieldOverrider = []FieldOverrider{{FieldPath: "/data/c", JSON: []JSONPatchOperation{{SubPath: "/site", Operator: OverriderOpAdd, ValueFrom: site}}}}
		}, nil, ""},
		{"plaintext value and valueFrom", func(o *Overriders) { o.Plaintext[0].ValueFrom = site },
			[]string{rule + ".plaintext[0].valueFrom"}, "value and valueFrom can't co-exist"},
		{"plaintext remove", func(o *Overriders) {
			o.Plaintext = []PlaintextOverrider{{Path: "/a", Operator: OverriderOpRemove, ValueFrom: site}}
		}, []string{rule + ".plaintext[0].valueFrom"}, "needs operator add or replace, not remove"},
		{"no source", func(o *Overriders) {
			o.Plaintext = []PlaintextOverrider{{Path: "/a", Operator: OverriderOpAdd, ValueFrom: &ClusterValueSource{}}}
		}, []string{rule + ".plaintext[0].valueFrom"}, "one of clusterName, clusterLabel or clusterAnnotation"},
		{"two sources", func(o *Overriders) {
			o.Plaintext = []PlaintextOverrider{{Path: "/a", Operator: OverriderOpAdd,
				ValueFrom: &ClusterValueSource{ClusterName: &ClusterNameSource{}, ClusterLabel: &ClusterKeySource{Key: "site"}}}}
		}, []string{rule + ".plaintext[0].valueFrom"}, "exactly one of"},
		{"label source without key", func(o *Overriders) {
			o.ImageOverrider = []ImageOverrider{{Component: Tag, Operator: OverriderOpAdd, ValueFrom: &ClusterValueSource{ClusterLabel: &ClusterKeySource{}}}}
		}, []string{rule + ".imageOverrider[0].valueFrom.clusterLabel.key"}, "Required"},
		{"image remove", func(o *Overriders) {
			o.ImageOverrider = []ImageOverrider{{Component: Registry, Operator: OverriderOpRemove, ValueFrom: site}}
		}, []string{rule + ".imageOverrider[0].valueFrom"}, "not remove"},
		{"annotation source key", func(o *Overriders) {
			o.ArgsOverrider = []CommandArgsOverrider{{ContainerName: "c", Operator: OverriderOpAdd,
				ValueFrom: []ClusterValueSource{*site, {ClusterAnnotation: &ClusterKeySource{Key: "bad key!"}}}}}
		}, []string{rule + ".argsOverrider[0].valueFrom[1].clusterAnnotation.key"}, "Invalid value"},
		{"labels remove", func(o *Overriders) {
			o.LabelsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpRemove, ValueFrom: map[string]ClusterValueSource{"site": *site}}}
		}, []string{rule + ".labelsOverrider[0].valueFrom"}, "not remove"},
		{"labels key in value and valueFrom", func(o *Overriders) {
			o.LabelsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"site": "x"},
				ValueFrom: map[string]ClusterValueSource{"site": *site}}}
		}, []string{rule + ".labelsOverrider[0].valueFrom[site]"}, "Duplicate value"},
		{"annotations bad key", func(o *Overriders) {
			o.AnnotationsOverrider = []LabelAnnotationOverrider{{Operator: OverriderOpAdd, ValueFrom: map[string]ClusterValueSource{"a~b": *site}}}
		}, []string{rule + ".annotationsOverrider[0].valueFrom[a~b]"}, "Invalid value"},
		{"fieldOverrider yaml value and valueFrom", func(o *Overriders) {
			o.FieldOverrider = []FieldOverrider{{FieldPath: "/data/c", YAML: []YAMLPatchOperation{
				{SubPath: "/a", Operator: OverriderOpAdd, Value: json.RawMessage(`"x"`)},
				{SubPath: "/b", Operator: OverriderOpReplace, Value: json.RawMessage(`"x"`), ValueFrom: site}}}}
		}, []string{rule + ".fieldOverrider[0].yaml[1].valueFrom"}, "can't co-exist"},
		{"fieldOverrider json remove", func(o *Overriders) {
			o.FieldOverrider = []FieldOverrider{{FieldPath: "/data/c", JSON: []JSONPatchOperation{{SubPath: "/a", Operator: OverriderOpRemove, ValueFrom: name}}}}
		}, []string{rule + ".fieldOverrider[0].json[0].valueFrom"}, "not remove"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := baseOP()
			tt.mutate(overriders(p))
			assertErrors(t, tt.name, p.Validate(), tt.want, tt.detail)
		})
	}
}
