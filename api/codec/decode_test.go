package codec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tetherproj/tether/api/codec"
)

// pp is a valid Karmada PropagationPolicy; tests splice fields into it.
const pp = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
  namespace: default
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinity:
      clusterNames: [m1, m2]
`

func TestDecodeFieldErrors(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantType codec.ErrorType
		wantPath string
		wantMsg  string
	}{{
		name:     "unknown field",
		input:    pp + "    foo: 1\n",
		wantType: codec.ErrorTypeUnknown,
		wantPath: "spec.placement.foo",
		wantMsg:  `unknown field "spec.placement.foo"`,
	}, {
		name:     "unknown field in a list item",
		input:    strings.Replace(pp, "name: nginx\n  placement", "name: nginx\n      bogus: x\n  placement", 1),
		wantType: codec.ErrorTypeUnknown,
		wantPath: "spec.resourceSelectors[0].bogus",
		wantMsg:  `unknown field "spec.resourceSelectors[0].bogus"`,
	}, {
		name:     "unknown field with Karmada's removed push-mode settings",
		input:    "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\nspec: {syncMode: Pull}\n",
		wantType: codec.ErrorTypeUnknown,
		wantPath: "spec.syncMode",
		wantMsg:  `unknown field "spec.syncMode"`,
	}, {
		name:     "string expected, number given",
		input:    pp + "    replicaScheduling:\n      replicaSchedulingType: 5\n",
		wantType: codec.ErrorTypeWrongType,
		wantPath: "spec.placement.replicaScheduling.replicaSchedulingType",
		wantMsg:  "spec.placement.replicaScheduling.replicaSchedulingType: expected string, got number",
	}, {
		name:     "integer expected, string given",
		input:    pp + "    replicaScheduling:\n      weightPreference:\n        staticWeightList: [{targetCluster: {}, weight: \"3\"}]\n",
		wantType: codec.ErrorTypeWrongType,
		wantPath: "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight",
		wantMsg:  "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: expected integer, got string",
	}, {
		name:     "integer expected, fraction given",
		input:    pp + "    spreadConstraints: [{minGroups: 1.5}]\n",
		wantType: codec.ErrorTypeWrongType,
		wantPath: "spec.placement.spreadConstraints[0].minGroups",
		wantMsg:  "spec.placement.spreadConstraints[0].minGroups: expected integer, got number 1.5",
	}, {
		name:     "integer out of range",
		input:    pp + "  priority: 3000000000\n",
		wantType: codec.ErrorTypeInvalid,
		wantPath: "spec.priority",
		wantMsg:  "spec.priority: 3000000000 is out of range for int32",
	}, {
		name:     "array expected, object given",
		input:    pp + "    clusterTolerations: {key: a}\n",
		wantType: codec.ErrorTypeWrongType,
		wantPath: "spec.placement.clusterTolerations",
		wantMsg:  "spec.placement.clusterTolerations: expected array, got object",
	}, {
		name:     "map value of the wrong type",
		input:    strings.Replace(pp, "namespace: default", "namespace: default\n  labels: {team: 1}", 1),
		wantType: codec.ErrorTypeWrongType,
		wantPath: "metadata.labels[team]",
		wantMsg:  "metadata.labels[team]: expected string, got number",
	}, {
		name:     "time of the wrong type",
		input:    strings.Replace(pp, "namespace: default", "namespace: default\n  creationTimestamp: 5", 1),
		wantType: codec.ErrorTypeWrongType,
		wantPath: "metadata.creationTimestamp",
		wantMsg:  "metadata.creationTimestamp: expected string, got number",
	}, {
		name:     "malformed quantity",
		input:    "apiVersion: cluster.tether.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\nspec: {}\nstatus: {resourceSummary: {allocatable: {cpu: lots}}}\n",
		wantType: codec.ErrorTypeInvalid,
		wantPath: "status.resourceSummary.allocatable[cpu]",
	}, {
		name:     "malformed base64",
		input:    "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterWebhookConfiguration\nmetadata: {name: w}\nwebhooks: [{name: a.b.c, clientConfig: {caBundle: '!!'}, interpreterContextVersions: [v1alpha1]}]\n",
		wantType: codec.ErrorTypeInvalid,
		wantPath: "webhooks[0].clientConfig.caBundle",
	}, {
		name:     "duplicate field in JSON",
		input:    `{"apiVersion":"policy.tether.io/v1alpha1","kind":"ClusterOverridePolicy","metadata":{"name":"a"},"spec":{},"spec":{}}`,
		wantType: codec.ErrorTypeDuplicate,
		wantPath: "spec",
		wantMsg:  `duplicate field "spec"`,
	}, {
		name:     "apiVersion of the wrong type",
		input:    "apiVersion: 1\nkind: PropagationPolicy\n",
		wantType: codec.ErrorTypeWrongType,
		wantPath: "apiVersion",
		wantMsg:  "apiVersion: expected string, got number",
	}, {
		name:     "kind missing",
		input:    "apiVersion: policy.tether.io/v1alpha1\nmetadata: {name: a}\n",
		wantType: codec.ErrorTypeRequired,
		wantPath: "kind",
		wantMsg:  "kind: required field is missing",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := codec.Decode([]byte(tt.input))
			if err == nil {
				t.Fatalf("Decode(%s) = %T, nil; want an error at %s", tt.name, obj, tt.wantPath)
			}
			fes := codec.FieldErrors(err)
			if len(fes) != 1 {
				t.Fatalf("Decode(%s) = %v; want exactly one field error at %s", tt.name, err, tt.wantPath)
			}
			fe := fes[0]
			if fe.Path != tt.wantPath || fe.Type != tt.wantType {
				t.Errorf("Decode(%s) error = %s at %s; want %s at %s", tt.name, fe.Type, fe.Path, tt.wantType, tt.wantPath)
			}
			if tt.wantMsg != "" && fe.Error() != tt.wantMsg {
				t.Errorf("Decode(%s) error = %q; want %q", tt.name, fe.Error(), tt.wantMsg)
			}
			if !strings.Contains(err.Error(), tt.wantPath) {
				t.Errorf("Decode(%s) = %q; want the message to name %s", tt.name, err, tt.wantPath)
			}
		})
	}
}

func TestDecodeReportsEveryProblem(t *testing.T) {
	input := pp + "    foo: 1\n    spreadConstraints: [{maxGroups: x}]\n  bar: true\n"
	_, err := codec.Decode([]byte(input))
	var got []string
	for _, fe := range codec.FieldErrors(err) {
		got = append(got, fe.Path)
	}
	want := []string{"spec.bar", "spec.placement.foo", "spec.placement.spreadConstraints[0].maxGroups"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Decode(three problems) paths = %v; want %v (error %v)", got, want, err)
	}
	var derr *codec.DocumentError
	if !errors.As(err, &derr) || derr.Index != 1 || derr.Kind != "PropagationPolicy" || derr.Name != "nginx" {
		t.Errorf("Decode(three problems) = %#v; want a *DocumentError naming document 1, PropagationPolicy nginx", err)
	}
}

func TestDecodeDuplicateYAMLKey(t *testing.T) {
	input := strings.Replace(pp, "kind: PropagationPolicy\n", "kind: PropagationPolicy\nkind: PropagationPolicy\n", 1)
	_, err := codec.Decode([]byte(input))
	if !errors.Is(err, codec.ErrSyntax) || !strings.Contains(err.Error(), `key "kind" already set`) {
		t.Errorf("Decode(duplicate YAML key) = %v; want ErrSyntax naming the key and line", err)
	}
}

// TestDecodeMissingRequired checks that a missing required field decodes but
// fails validation with the field's path.
func TestDecodeMissingRequired(t *testing.T) {
	tests := []struct {
		name, input, wantPath string
	}{
		{"propagation policy without selectors",
			"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: a, namespace: default}\nspec: {placement: {}}\n",
			"spec.resourceSelectors"},
		{"propagation policy without spec",
			"apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: a}\n",
			"spec.resourceSelectors"},
		{"selector without kind",
			strings.Replace(pp, "      kind: Deployment\n", "", 1),
			"spec.resourceSelectors[0].kind"},
		{"object without name",
			strings.Replace(pp, "  name: nginx\n  namespace", "  namespace", 1),
			"metadata.name"},
		{"plaintext overrider without path",
			"apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata: {name: a}\nspec: {overrideRules: [{overriders: {plaintext: [{operator: remove}]}}]}\n",
			"spec.overrideRules[0].overriders.plaintext[0].path"},
		{"customization without target kind",
			"apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: a}\nspec: {target: {apiVersion: v1}, customizations: {healthInterpretation: {luaScript: 'function InterpretHealth(o) return true end'}}}\n",
			"spec.target.kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := codec.Decode([]byte(tt.input))
			if err != nil {
				t.Fatalf("Decode(%s) = %v; want no error (validation reports it)", tt.name, err)
			}
			errs := obj.Validate()
			if len(errs) != 1 || errs[0].Field != tt.wantPath {
				t.Errorf("Validate(%s) = %v; want one error at %s", tt.name, errs, tt.wantPath)
			}
		})
	}
}
