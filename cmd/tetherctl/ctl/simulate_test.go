package ctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
	"github.com/tetherproj/tether/hub/clientapi/offline"
	"github.com/tetherproj/tether/hub/placement/placementtest"
)

// caseRoot holds the project's placement and override conformance cases.
const caseRoot = "../../../api/policy/v1alpha1/testdata/conformance/placement"

// conformanceCase is the part of a case file the CLI tests read.
type conformanceCase struct {
	Name        string          `json:"name"`
	Conformance string          `json:"conformance"`
	Input       json.RawMessage `json:"input"`
	Expected    json.RawMessage `json:"expected"`
}

// placementDiffers pins the may-differ schedule cases to Tether's
// documented behaviour (hub/placement/README.md); cases not listed must
// give the expected result.
var placementDiffers = map[string]offline.Placement{
	"s29-spread-cluster-without-maxgroups":       {Clusters: []offline.PlacedCluster{{Name: "m1", Replicas: 1}, {Name: "m2", Replicas: 1}, {Name: "m3", Replicas: 1}}},
	"s51-zero-replicas-with-requests-duplicated": {Clusters: []offline.PlacedCluster{{Name: "m1"}, {Name: "m2"}}},
	"s53-spread-region-without-maxgroups":        {Clusters: []offline.PlacedCluster{{Name: "a", Replicas: 4}}},
}

// sameAsKarmada are the may-differ cases where Tether keeps Karmada's result.
var sameAsKarmada = map[string]bool{"s34-spread-zone-degrades-to-cluster": true, "s50-spread-by-label-unsupported": true}

func loadCases(t *testing.T, dir string) []conformanceCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(caseRoot, dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in %s/%s (err %v)", caseRoot, dir, err)
	}
	sort.Strings(files)
	var out []conformanceCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c conformanceCase
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
		out = append(out, c)
	}
	return out
}

// runCtl runs tetherctl in-process.
func runCtl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := ctl.Run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// simulatePlacement runs `placement simulate -f FILE -o json` on input.
func simulatePlacement(t *testing.T, name string, input []byte) offline.Placement {
	t.Helper()
	code, out, errOut := runCtl(t, "placement", "simulate", "-f", writeTemp(t, name, input), "-o", "json")
	if code != 0 {
		t.Fatalf("placement simulate %s = %d, stderr %q; want 0", name, code, errOut)
	}
	var got offline.Placement
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("placement simulate %s printed %q: %v", name, out, err)
	}
	return got
}

// TestPlacementSimulateConformance runs every schedule case through the
// CLI: the CLI path places exactly as the scheduler's own conformance test.
func TestPlacementSimulateConformance(t *testing.T) {
	for _, c := range loadCases(t, "schedule") {
		t.Run(c.Name, func(t *testing.T) {
			var want offline.Placement
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			if differ, ok := placementDiffers[c.Name]; ok {
				want = differ
			} else if c.Conformance != "must" && !sameAsKarmada[c.Name] {
				t.Fatalf("%s is %s with no documented Tether behaviour in this test", c.Name, c.Conformance)
			}
			got := simulatePlacement(t, c.Name+".json", c.Input)
			checkPlacement(t, c.Name, got, want)
		})
	}
}

func checkPlacement(t *testing.T, name string, got, want offline.Placement) {
	t.Helper()
	if want.Clusters == nil {
		want.Clusters = []offline.PlacedCluster{}
	}
	sort.Slice(want.Clusters, func(i, j int) bool { return want.Clusters[i].Name < want.Clusters[j].Name })
	if diff := cmp.Diff(want.Clusters, got.Clusters); diff != "" {
		t.Errorf("placement simulate %s clusters (-want +got):\n%s", name, diff)
	}
	if got.ErrorType != want.ErrorType || placementtest.KarmadaMessage(got.Error) != want.Error {
		t.Errorf("placement simulate %s error = %s %q; want %s %q", name, got.ErrorType, got.Error, want.ErrorType, want.Error)
	}
}

// TestPlacementSimulateYAML: a YAML input gives the JSON input's result.
func TestPlacementSimulateYAML(t *testing.T) {
	c := loadCases(t, "schedule")[0]
	y, err := yaml.JSONToYAML(c.Input)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(simulatePlacement(t, "in.json", c.Input), simulatePlacement(t, "in.yaml", y)); diff != "" {
		t.Errorf("placement simulate YAML vs JSON (-json +yaml):\n%s", diff)
	}
}

func TestPlacementSimulateBadInput(t *testing.T) {
	for name, input := range map[string]string{
		"unknown field":   `{"placement": {}, "clusterz": []}`,
		"placement typo":  `{"placement": {"clusterAfinity": {}}}`,
		"not json/yaml":   "{{{",
		"wrong type":      `{"workload": {"replicas": "three"}}`,
		"missing file -f": "",
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"placement", "simulate", "-o", "json", "-f", writeTemp(t, "in.json", []byte(input))}
			if input == "" {
				args[len(args)-1] = filepath.Join(t.TempDir(), "missing.json")
			}
			code, out, errOut := runCtl(t, args...)
			if code != 1 || out != "" || !strings.HasPrefix(errOut, "error: ") {
				t.Errorf("placement simulate (%s) = %d, %q, %q; want 1, no output and an error", name, code, out, errOut)
			}
		})
	}
}

// TestOverridesSimulateConformance runs every override case through the CLI.
func TestOverridesSimulateConformance(t *testing.T) {
	for _, c := range loadCases(t, "override") {
		t.Run(c.Name, func(t *testing.T) {
			if c.Conformance != "must" {
				t.Fatalf("%s is %s: no may-differ override case is expected (internal/overrides/README.md)", c.Name, c.Conformance)
			}
			var want struct {
				Object map[string]any `json:"object"`
				Error  string         `json:"error"`
			}
			if err := json.Unmarshal(c.Expected, &want); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCtl(t, "overrides", "simulate", "-o", "json", "-f", writeTemp(t, c.Name+".json", c.Input))
			if code != 0 {
				t.Fatalf("overrides simulate %s = %d, stderr %q; want 0", c.Name, code, errOut)
			}
			var got struct {
				Object map[string]any `json:"object"`
				Error  string         `json:"error"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("overrides simulate %s printed %q: %v", c.Name, out, err)
			}
			if want.Error != "" {
				if got.Object != nil || !strings.Contains(got.Error, want.Error) {
					t.Errorf("overrides simulate %s = %v, error %q; want an error saying %q", c.Name, got.Object, got.Error, want.Error)
				}
				return
			}
			if got.Error != "" {
				t.Fatalf("overrides simulate %s error = %q; want the object", c.Name, got.Error)
			}
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("overrides simulate %s object (-want +got):\n%s", c.Name, diff)
			}
		})
	}
}

func TestOverridesSimulateInvalidPolicy(t *testing.T) {
	input := `{"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}},
"cluster": {"name": "m1"},
"overridePolicies": [{"apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
  "metadata": {"name": "p", "namespace": "default"},
  "spec": {"overrideRules": [{"overriders": {"plaintext": [{"path": "/x", "operator": "frobnicate"}]}}]}}]}`
	code, out, errOut := runCtl(t, "overrides", "simulate", "-f", writeTemp(t, "in.json", []byte(input)))
	if code != 1 || out != "" || !strings.Contains(errOut, "overridePolicies[0]") || !strings.Contains(errOut, "operator") {
		t.Errorf("overrides simulate with an invalid policy = %d, %q, %q; want 1 and an error naming the policy and field", code, out, errOut)
	}
}

// TestOverridesSimulateValueFrom: the offline simulation resolves valueFrom
// from the input cluster's name, labels and annotations, and reports the
// cluster that cannot answer.
func TestOverridesSimulateValueFrom(t *testing.T) {
	input := func(annotations string) string {
		return `{"object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"}},
"cluster": {"name": "edge-1", "labels": {"site": "paris"}, "annotations": ` + annotations + `},
"overridePolicies": [{"apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
  "metadata": {"name": "p", "namespace": "default"},
  "spec": {"overrideRules": [{"overriders": {"labelsOverrider": [{"operator": "add", "valueFrom": {
    "site": {"clusterLabel": {"key": "site"}}, "cluster": {"clusterName": {}}}}],
    "plaintext": [{"path": "/data", "operator": "add", "valueFrom": {"clusterAnnotation": {"key": "example.com/endpoint"}}}]}}]}}]}`
	}
	out := strings.TrimSpace(mustRunCtl(t, "overrides", "simulate", "-o", "json", "-f", writeTemp(t, "in.json", []byte(input(`{"example.com/endpoint": "e1:443"}`)))))
	want := `{"object":{"apiVersion":"v1","data":"e1:443","kind":"ConfigMap","metadata":{"labels":{"cluster":"edge-1","site":"paris"},"name":"a","namespace":"default"}}}`
	if strings.Join(strings.Fields(out), "") != want {
		t.Errorf("overrides simulate with valueFrom = %s; want %s", out, want)
	}
	out = mustRunCtl(t, "overrides", "simulate", "-o", "json", "-f", writeTemp(t, "in2.json", []byte(input(`{}`))))
	if !strings.Contains(out, `cluster edge-1 has no annotation \"example.com/endpoint\"`) {
		t.Errorf("overrides simulate without the annotation = %s; want the error naming cluster and annotation", out)
	}
}

// mustRunCtl runs an offline tetherctl command that must succeed.
func mustRunCtl(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runCtl(t, args...)
	if code != 0 {
		t.Fatalf("tetherctl %v = %d, stderr %q; want 0", args, code, errOut)
	}
	return out
}
