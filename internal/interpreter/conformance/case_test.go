package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

func loadAll(t *testing.T) []Case {
	t.Helper()
	cases, err := LoadAll(Root())
	if err != nil {
		t.Fatalf("LoadAll: %v", err)
	}
	return cases
}

func TestLoadAllCounts(t *testing.T) {
	counts := map[string]int{}
	for _, c := range loadAll(t) {
		counts[c.Interpreter]++
		if c.Expected.Error != nil {
			counts["error"]++
		}
	}
	want := map[string]int{Lua: 217, Native: 110, "error": 85}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("cases[%s] = %d; want %d", k, counts[k], n)
		}
	}
}

func TestLoadInputs(t *testing.T) {
	byName := map[string]Case{}
	for _, c := range loadAll(t) {
		byName[c.Name] = c
		if c.Object() == nil && c.Operation != "" {
			t.Errorf("%s: no input object", c.Name)
		}
		if c.Interpreter == Lua && c.Customization == "" {
			t.Errorf("%s: lua case without customization", c.Name)
		}
	}
	c := byName["native/Deployment/interpretreplica-01-requirements"]
	if c.Target.Kind != "Deployment" || c.Target.Group != "apps" || c.Operation != configv1alpha1.InterpreterOperationInterpretReplica {
		t.Errorf("target/op = %v %s; want apps/v1 Deployment InterpretReplica", c.Target, c.Operation)
	}
	if r, ok := c.Desired.Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 4 {
		t.Errorf("spec.replicas = %#v; want int64 4", c.Desired.Object["spec"].(map[string]any)["replicas"])
	}
	for _, c := range byName {
		if c.Operation == configv1alpha1.InterpreterOperationAggregateStatus && c.HasStatusItems != (c.StatusItems != nil) {
			t.Errorf("%s: HasStatusItems=%t but StatusItems nil=%t", c.Name, c.HasStatusItems, c.StatusItems == nil)
		}
	}
}

func TestReadDocuments(t *testing.T) {
	for _, c := range loadAll(t) {
		if c.Customization == "" {
			continue
		}
		docs, err := ReadDocuments(c.Customization)
		if err != nil || len(docs) == 0 {
			t.Errorf("ReadDocuments(%s) = %d docs, %v; want some", c.Customization, len(docs), err)
		}
	}
}

// TestExpectedMatchesItself feeds every case's expected output back as the
// result, typed the way an interpreter would produce it.
func TestExpectedMatchesItself(t *testing.T) {
	for _, c := range loadAll(t) {
		t.Run(c.Name, func(t *testing.T) {
			var gotErr error
			if c.Expected.Error != nil {
				gotErr = fmt.Errorf("%s", *c.Expected.Error)
			}
			got := Results{}
			for k, v := range c.Expected.Results {
				got[k] = typed(v, "", c.Expected.FloatPaths[k])
			}
			if err := Compare(c, got, gotErr); err != nil {
				t.Errorf("Compare(expected) = %v; want nil", err)
			}
			if err := c.CheckEnabled(c.Expected.Enabled); err != nil {
				t.Errorf("CheckEnabled(expected) = %v", err)
			}
		})
	}
}

// typed turns json.Number into int64, or float64 at the given float paths.
func typed(v any, path string, floats []string) any {
	switch v := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			m[k] = typed(e, p, floats)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = typed(e, fmt.Sprintf("%s[%d]", path, i), floats)
		}
		return l
	case json.Number:
		for _, f := range floats {
			if f == path {
				x, _ := v.Float64()
				return x
			}
		}
		if i, err := v.Int64(); err == nil && !strings.ContainsAny(string(v), ".eE") {
			return i
		}
		return v
	}
	return v
}

// TestCompareRejectsWrongOutcome makes sure no case passes with an empty
// result or a missing error, so a broken runner cannot pass the suite.
func TestCompareRejectsWrongOutcome(t *testing.T) {
	for _, c := range loadAll(t) {
		if c.SkipReason() != "" {
			continue
		}
		var err error
		if c.Expected.Error != nil {
			err = Compare(c, nil, nil)
		} else {
			err = Compare(c, Results{}, nil)
			if err == nil {
				err = Compare(c, nil, fmt.Errorf("unexpected"))
			}
		}
		if err == nil {
			t.Errorf("%s: Compare accepted a wrong outcome", c.Name)
		}
	}
}
