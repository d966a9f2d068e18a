package conformance

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	rt "k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// mustExpected decodes an expected output the way Load does.
func mustExpected(t *testing.T, js string) Expected {
	t.Helper()
	var f expectedFile
	v, err := decodeJSON([]byte(js))
	if err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	raw, _ := json.Marshal(v)
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	return f.expected()
}

func obj(content map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: content}
}

func TestCompare(t *testing.T) {
	revisedExp := `{"enabled":true,"error":null,"results":{"revised":{"kind":"X","spec":{"replicas":3,"scale":1.5}}},"floatPaths":{"revised":["spec.scale"]}}`
	tests := []struct {
		name   string
		c      Case
		got    Results
		gotErr error
		ok     bool
	}{
		{
			name: "integral float equals integer",
			c:    Case{Expected: mustExpected(t, `{"enabled":true,"error":null,"results":{"replica":3,"requires":null}}`)},
			got:  Results{"replica": 3.0, "requires": nil},
			ok:   true,
		},
		{
			name: "numbers beyond 2^53 differ",
			c:    Case{Expected: mustExpected(t, `{"enabled":true,"error":null,"results":{"revised":{"kind":"X","spec":{"replicas":9007199254740993}}}}`)},
			got:  RevisedResults(obj(map[string]any{"kind": "X", "spec": map[string]any{"replicas": int64(9007199254740992)}})),
		},
		{
			name: "null is not absent",
			c:    Case{Expected: mustExpected(t, `{"enabled":true,"error":null,"results":{"replica":1,"requires":null}}`)},
			got:  Results{"replica": int64(1)},
		},
		{
			name: "float path present",
			c:    Case{Expected: mustExpected(t, revisedExp)},
			got:  RevisedResults(obj(map[string]any{"kind": "X", "spec": map[string]any{"replicas": int64(3), "scale": 1.5}})),
			ok:   true,
		},
		{
			name: "integral float where int64 expected",
			c:    Case{Expected: mustExpected(t, revisedExp)},
			got:  RevisedResults(obj(map[string]any{"kind": "X", "spec": map[string]any{"replicas": 3.0, "scale": 1.5}})),
		},
		{
			name: "ignored paths",
			c: Case{
				Expected:    mustExpected(t, `{"enabled":true,"error":null,"results":{"aggregatedStatus":{"kind":"Job","status":{"conditions":[{"type":"Complete","lastProbeTime":"2020-01-01T00:00:00Z"}]}}}}`),
				IgnorePaths: map[string][]string{"aggregatedStatus": {"status.conditions.*.lastProbeTime"}},
			},
			got: AggregatedStatusResults(obj(map[string]any{"kind": "Job", "status": map[string]any{
				"conditions": []any{map[string]any{"type": "Complete", "lastProbeTime": "2030-01-01T00:00:00Z"}}}})),
			ok: true,
		},
		{
			name: "dependencies as a set",
			c: Case{
				Expected: mustExpected(t, `{"enabled":true,"error":null,"results":{"dependencies":[{"apiVersion":"v1","kind":"Secret","namespace":"a","name":"x"},{"apiVersion":"v1","kind":"ConfigMap","namespace":"a","name":"y"}]}}`),
				SetKeys:  []string{KeyDependencies},
			},
			got: mustResults(DependencyResults([]configv1alpha1.DependentObjectReference{
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "y"},
				{APIVersion: "v1", Kind: "Secret", Namespace: "a", Name: "x"},
			})),
			ok: true,
		},
		{
			name: "dependencies in order",
			c:    Case{Expected: mustExpected(t, `{"enabled":true,"error":null,"results":{"dependencies":[{"apiVersion":"v1","kind":"Secret","namespace":"a","name":"x"},{"apiVersion":"v1","kind":"ConfigMap","namespace":"a","name":"y"}]}}`)},
			got: mustResults(DependencyResults([]configv1alpha1.DependentObjectReference{
				{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "y"},
				{APIVersion: "v1", Kind: "Secret", Namespace: "a", Name: "x"},
			})),
		},
		{
			name:   "exact error",
			c:      Case{ErrorCompare: ErrorExact, Expected: mustExpected(t, `{"enabled":true,"error":"boom: 1"}`)},
			gotErr: errors.New("boom: 1"),
			ok:     true,
		},
		{
			name:   "exact error differs",
			c:      Case{ErrorCompare: ErrorExact, ErrorContains: "boom", Expected: mustExpected(t, `{"enabled":true,"error":"boom: 1"}`)},
			gotErr: errors.New("boom: 2"),
		},
		{
			name:   "contains error",
			c:      Case{ErrorCompare: ErrorContains, ErrorContains: "deadline", Expected: mustExpected(t, `{"enabled":true,"error":"x: deadline exceeded\ntrace"}`)},
			gotErr: errors.New("y: deadline exceeded\nother trace"),
			ok:     true,
		},
		{
			name: "error expected, results given",
			c:    Case{ErrorCompare: ErrorExact, Expected: mustExpected(t, `{"enabled":true,"error":"boom"}`)},
			got:  HealthResults(true),
		},
		{
			name: "alternative matches",
			c: Case{
				Expected:     mustExpected(t, `{"enabled":true,"error":null,"results":{"status":{"keep":1}}}`),
				Alternatives: []Expected{mustExpected(t, `{"enabled":true,"error":null,"results":{"status":{"keep":1,"list":[]}}}`)},
			},
			got: mustResults(StatusResults(&rt.RawExtension{Raw: []byte(`{"list":[],"keep":1.0}`)})),
			ok:  true,
		},
		{
			name: "null status",
			c:    Case{Expected: mustExpected(t, `{"enabled":true,"error":null,"results":{"status":null}}`)},
			got:  mustResults(StatusResults(nil)),
			ok:   true,
		},
		{
			name: "other platform is skipped",
			c:    Case{Platform: "not-" + runtime.GOARCH, Expected: mustExpected(t, `{"enabled":true,"error":null,"results":{"replica":1}}`)},
			got:  Results{"replica": 2},
			ok:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Compare(tt.c, tt.got, tt.gotErr)
			if (err == nil) != tt.ok {
				t.Errorf("Compare = %v; want ok=%t", err, tt.ok)
			}
		})
	}
}

func mustResults(r Results, err error) Results {
	if err != nil {
		panic(err)
	}
	return r
}

func TestCheckEnabled(t *testing.T) {
	c := Case{Expected: Expected{Enabled: false}}
	if err := c.CheckEnabled(false); err != nil {
		t.Errorf("CheckEnabled(false) = %v; want nil", err)
	}
	if err := c.CheckEnabled(true); err == nil {
		t.Errorf("CheckEnabled(true) = nil; want an error")
	}
}

func TestLenientErrors(t *testing.T) {
	c := Case{ErrorCompare: ErrorExact, ErrorContains: "boom", Expected: mustExpected(t, `{"enabled":true,"error":"boom: 1"}`)}
	if err := CompareWith(c, nil, errors.New("a boom: 2"), Options{LenientErrors: true}); err != nil {
		t.Errorf("CompareWith(lenient) = %v; want nil", err)
	}
}

func TestDeletePath(t *testing.T) {
	tests := []struct {
		path string
		want string
	}{
		{"a.*.t", `{"a":[{"k":1},{"k":2}],"b":{"t":1}}`},
		{"a.1", `{"a":[{"k":1,"t":1}],"b":{"t":1}}`},
		{"a.*", `{"a":[],"b":{"t":1}}`},
		{"*.t", `{"a":[{"k":1,"t":1},{"k":2,"t":2}],"b":{}}`},
		{"missing.x", `{"a":[{"k":1,"t":1},{"k":2,"t":2}],"b":{"t":1}}`},
	}
	for _, tt := range tests {
		v, _ := decodeJSON([]byte(`{"a":[{"k":1,"t":1},{"k":2,"t":2}],"b":{"t":1}}`))
		got := canonical(deletePath(v, strings.Split(tt.path, ".")))
		if got != tt.want {
			t.Errorf("deletePath(%s) = %s; want %s", tt.path, got, tt.want)
		}
	}
}
