package placement

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// caseDir is the project's copy of the placement conformance cases.
const caseDir = "../../api/policy/v1alpha1/testdata/conformance/placement/schedule"

// schedCase is one schedule conformance case file.
type schedCase struct {
	Name        string `json:"name"`
	Conformance string `json:"conformance"`
	// Input is decoded by DecodeCaseInput, the decoder tetherctl uses.
	Input    json.RawMessage `json:"input"`
	Expected struct {
		Clusters  []caseTarget `json:"clusters"`
		Error     string       `json:"error"`
		ErrorType string       `json:"errorType"`
	} `json:"expected"`
	Karmada struct {
		Clusters map[string]struct {
			Filter map[string]string `json:"filter"`
		} `json:"clusters"`
	} `json:"karmada"`
}

type caseTarget struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

// loadCases reads every case file of the directory, sorted by name.
func loadCases(t *testing.T) []schedCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(caseDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schedule cases in %s (err %v)", caseDir, err)
	}
	sort.Strings(files)
	cases := make([]schedCase, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c schedCase
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// loadCase reads one case by name.
func loadCase(t *testing.T, name string) schedCase {
	t.Helper()
	for _, c := range loadCases(t) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("case %s not found in %s", name, caseDir)
	return schedCase{}
}

// input decodes the scheduler input of a case with DecodeCaseInput,
// applying API defaults unless the case says not to.
func (c *schedCase) input(t *testing.T) Input {
	t.Helper()
	in, err := DecodeCaseInput(c.Input)
	if err != nil {
		t.Fatalf("input of %s: %v", c.Name, err)
	}
	return in
}

// sortedTargets returns targets sorted by name, zero replicas kept.
func sortedTargets(ts []TargetCluster) []TargetCluster {
	out := append([]TargetCluster{}, ts...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// expectedTargets is the case's expected clusters as targets.
func (c *schedCase) expectedTargets() []TargetCluster {
	out := []TargetCluster{}
	for _, e := range c.Expected.Clusters {
		out = append(out, TargetCluster(e))
	}
	return sortedTargets(out)
}

// rejectedByKarmada lists the clusters Karmada's filters turned down.
func (c *schedCase) rejectedByKarmada() []string {
	var out []string
	for name, info := range c.Karmada.Clusters {
		for _, v := range info.Filter {
			if v != "Success" {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
