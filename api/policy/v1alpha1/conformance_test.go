package v1alpha1_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tetherproj/tether/api/codec"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// conformanceDir holds the placement and override cases, copied verbatim
// from the shared conformance suite (see its README.md).
const conformanceDir = "testdata/conformance/placement"

// conformanceCase is the part of a case file these tests read.
type conformanceCase struct {
	Name  string `json:"name"`
	Input struct {
		Placement               json.RawMessage   `json:"placement"`
		ApplyDefaults           *bool             `json:"applyDefaults"`
		Workload                map[string]any    `json:"workload"`
		ClusterOverridePolicies []json.RawMessage `json:"clusterOverridePolicies"`
		OverridePolicies        []json.RawMessage `json:"overridePolicies"`
	} `json:"input"`
}

// invalidCases lists the cases whose policies are meant to fail validation,
// with the path of the expected error. None of the current cases is.
var invalidCases = map[string]string{}

func loadCases(t *testing.T, dir string) []conformanceCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(conformanceDir, dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("Glob(%s) = %v, %v; want case files", dir, files, err)
	}
	cases := make([]conformanceCase, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c conformanceCase
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// wrapPlacement makes a PropagationPolicy document around a case's
// placement, as a Karmada user would write it.
func wrapPlacement(c conformanceCase) []byte {
	w := c.Input.Workload
	doc := map[string]any{
		"apiVersion": "policy.karmada.io/v1alpha1",
		"kind":       "PropagationPolicy",
		"metadata":   map[string]any{"name": c.Name, "namespace": "default"},
		"spec": map[string]any{
			"resourceSelectors": []any{map[string]any{
				"apiVersion": w["apiVersion"], "kind": w["kind"], "name": w["name"],
			}},
			"placement": c.Input.Placement,
		},
	}
	js, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return js
}

func TestConformanceSchedulePlacements(t *testing.T) {
	for _, c := range loadCases(t, "schedule") {
		t.Run(c.Name, func(t *testing.T) {
			doc := wrapPlacement(c)
			obj := roundTrip(t, c.Name, doc)
			if obj == nil {
				return
			}
			// With applyDefaults (the default) the scheduler defaults the
			// placement; the defaulted policy must stay valid.
			if c.Input.ApplyDefaults == nil || *c.Input.ApplyDefaults {
				defaulted, err := codec.Clone(obj)
				if err != nil {
					t.Fatalf("Clone(%s) = %v", c.Name, err)
				}
				defaulted.SetDefaults()
				if errs := defaulted.Validate(); len(errs) > 0 {
					t.Errorf("Validate(SetDefaults(%s)) = %v; want no errors", c.Name, errs)
				}
			}
		})
	}
}

func TestConformanceOverridePolicies(t *testing.T) {
	for _, c := range loadCases(t, "override") {
		t.Run(c.Name, func(t *testing.T) {
			docs := append(append([]json.RawMessage{}, c.Input.ClusterOverridePolicies...), c.Input.OverridePolicies...)
			if len(docs) == 0 {
				t.Fatalf("case %s has no policies", c.Name)
			}
			for _, doc := range docs {
				roundTrip(t, c.Name, doc)
			}
		})
	}
}

// roundTrip decodes doc strictly (as JSON and as YAML), validates it and
// checks that encoding gives back the same JSON value. It returns the
// object decoded from JSON, or nil if the case is expected to be invalid.
func roundTrip(t *testing.T, name string, doc []byte) codec.Object {
	t.Helper()
	obj, err := codec.Decode(doc)
	if err != nil {
		t.Fatalf("Decode(%s) = %v; want no error", name, err)
	}
	checkValidation(t, name, obj)
	assertSameJSON(t, name, obj, doc)

	y, err := yaml.JSONToYAML(doc)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := codec.Decode(y)
	if err != nil {
		t.Fatalf("Decode(YAML of %s) = %v; want no error", name, err)
	}
	assertSameJSON(t, name+" (YAML)", fromYAML, doc)
	if _, invalid := invalidCases[name]; invalid {
		return nil
	}
	return obj
}

func checkValidation(t *testing.T, name string, obj codec.Object) {
	t.Helper()
	errs := obj.Validate()
	wantPath, invalid := invalidCases[name]
	switch {
	case !invalid && len(errs) > 0:
		t.Errorf("Validate(%s) = %v; want no errors", name, errs)
	case invalid && (len(errs) == 0 || errs[0].Field != wantPath):
		t.Errorf("Validate(%s) = %v; want an error at %s", name, errs, wantPath)
	}
}

func assertSameJSON(t *testing.T, name string, obj codec.Object, want []byte) {
	t.Helper()
	got, err := codec.Encode(obj)
	if err != nil {
		t.Fatalf("Encode(%s) = %v", name, err)
	}
	var gotV, wantV any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &wantV); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("Encode(Decode(%s)) differs from the input (-input +encoded):\n%s", name, diff)
	}
}

// TestConformanceDefaults pins what the scheduler sees once a case's
// placement is defaulted, for the cases whose result depends on defaults.
func TestConformanceDefaults(t *testing.T) {
	cases := map[string]policyv1alpha1.ReplicaSchedulingStrategy{
		"s10-divided-defaults-to-weighted": {
			ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		},
	}
	for _, c := range loadCases(t, "schedule") {
		want, ok := cases[c.Name]
		if !ok {
			continue
		}
		obj, err := codec.Decode(wrapPlacement(c))
		if err != nil {
			t.Fatalf("Decode(%s) = %v", c.Name, err)
		}
		pp := obj.(*policyv1alpha1.PropagationPolicy)
		pp.SetDefaults()
		if diff := cmp.Diff(&want, pp.Spec.Placement.ReplicaScheduling); diff != "" {
			t.Errorf("SetDefaults(%s).replicaScheduling differs (-want +got):\n%s", c.Name, diff)
		}
	}
}
