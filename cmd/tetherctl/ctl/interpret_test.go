package ctl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// writeFile writes content to name in a fresh temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const cloneSet = `
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, namespace: shop, generation: 2}
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: web
          image: web:1
          resources: {requests: {cpu: 500m}}
          envFrom: [{configMapRef: {name: web-env}}]
status: {observedGeneration: 2, updatedReplicas: 3, availableReplicas: 3}
`

// envelope is interpret's JSON output.
type envelope struct {
	Operation string         `json:"operation"`
	Results   map[string]any `json:"results"`
	Error     string         `json:"error"`
}

// interpretJSON runs interpret -o json and decodes what it printed.
func interpretJSON(t *testing.T, args ...string) (int, envelope) {
	t.Helper()
	code, out, errOut := run(t, append([]string{"interpret", "-o", "json"}, args...)...)
	var e envelope
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("interpret %v printed %q (stderr %q): %v", args, out, errOut, err)
	}
	return code, e
}

func TestInterpretBuiltinSuccessJSON(t *testing.T) {
	desired := writeFile(t, "cloneset.yaml", cloneSet)
	tests := []struct {
		name string
		args []string
		want map[string]any
	}{
		{"replica", []string{"--operation", "InterpretReplica", "--desired", desired},
			map[string]any{"replica": 3.0, "requires": map[string]any{"resourceRequest": map[string]any{"cpu": "500m"}}}},
		{"health from observed", []string{"--operation", "interprethealth", "--observed", desired},
			map[string]any{"healthy": true}},
		{"dependencies", []string{"--operation", "InterpretDependency", "--desired", desired},
			map[string]any{"dependencies": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "web-env"}}}},
		{"revise to zero", []string{"--operation", "ReviseReplica", "--desired", desired, "--replicas", "0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := interpretJSON(t, tt.args...)
			if code != 0 || got.Error != "" {
				t.Fatalf("interpret %v = %d, error %q; want 0", tt.args, code, got.Error)
			}
			if tt.want == nil {
				return
			}
			if diff := cmp.Diff(tt.want, got.Results); diff != "" {
				t.Errorf("interpret %v results (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

func TestInterpretReviseReplicaResult(t *testing.T) {
	desired := writeFile(t, "cloneset.yaml", cloneSet)
	code, got := interpretJSON(t, "--operation", "ReviseReplica", "--desired", desired, "--replicas", "0")
	revised, _ := got.Results["revised"].(map[string]any)
	spec, _ := revised["spec"].(map[string]any)
	if code != 0 || spec["replicas"] != 0.0 {
		t.Errorf("ReviseReplica --replicas 0 = %d, %v; want spec.replicas 0", code, got.Results)
	}
	if got.Operation != "ReviseReplica" {
		t.Errorf("operation = %q; want ReviseReplica", got.Operation)
	}
}

func TestInterpretNativeAndAggregate(t *testing.T) {
	deploy := writeFile(t, "deploy.json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"n"},"spec":{"replicas":4}}`)
	code, got := interpretJSON(t, "--operation", "InterpretReplica", "--desired", deploy)
	if code != 0 || got.Results["replica"] != 4.0 {
		t.Errorf("native InterpretReplica = %d, %+v; want replica 4", code, got)
	}
	desired := writeFile(t, "cloneset.yaml", cloneSet)
	items := writeFile(t, "items.yaml", `
- clusterName: a
  applied: true
  status: {replicas: 2, readyReplicas: 2, generation: 1, observedGeneration: 1, resourceTemplateGeneration: 2}
- clusterName: b
  status: {replicas: 1}
`)
	code, got = interpretJSON(t, "--operation", "AggregateStatus", "--desired", desired, "--status-items", items)
	agg, _ := got.Results["aggregatedStatus"].(map[string]any)
	status, _ := agg["status"].(map[string]any)
	if code != 0 || status["replicas"] != 3.0 || status["readyReplicas"] != 2.0 {
		t.Errorf("AggregateStatus = %d, %+v; want replicas 3, readyReplicas 2", code, got)
	}
}

func TestInterpretCustomizationComesFirst(t *testing.T) {
	desired := writeFile(t, "cloneset.yaml", cloneSet)
	ric := writeFile(t, "ric.yaml", `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: mine}
spec:
  target: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet}
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj) return 42, nil end
`)
	code, got := interpretJSON(t, "--operation", "InterpretReplica", "--desired", desired, "--customization", ric)
	if code != 0 || got.Results["replica"] != 42.0 {
		t.Errorf("with --customization = %d, %+v; want replica 42 from the customization", code, got)
	}
	// Operations the customization does not define fall to the built-ins.
	code, got = interpretJSON(t, "--operation", "InterpretHealth", "--observed", desired, "--customization", ric)
	if code != 0 || got.Results["healthy"] != true {
		t.Errorf("InterpretHealth with --customization = %d, %+v; want the built-in answer", code, got)
	}
}

func TestInterpretErrorJSON(t *testing.T) {
	desired := writeFile(t, "cloneset.yaml", cloneSet)
	failing := writeFile(t, "ric.yaml", `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: broken}
spec:
  target: {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet}
  customizations:
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj) error("boom") end
`)
	bad := writeFile(t, "bad.yaml", "apiVersion: v1\nkind: [unclosed\n")
	noKind := writeFile(t, "nokind.yaml", "metadata: {name: x}\n")
	missing := filepath.Join(t.TempDir(), "absent.yaml")
	tests := []struct {
		name      string
		args      []string
		wantOp    string
		wantError []string
	}{
		{"script error", []string{"--operation", "InterpretHealth", "--observed", desired, "--customization", failing},
			"InterpretHealth", []string{"boom"}},
		{"no handler", []string{"--operation", "InterpretComponent", "--desired", desired},
			"InterpretComponent", []string{"GetComponents not implemented"}},
		{"unknown operation", []string{"--operation", "Frobnicate", "--desired", desired},
			"Frobnicate", []string{`unknown operation "Frobnicate"`, "InterpretReplica"}},
		{"no operation", []string{"--desired", desired}, "", []string{"--operation is required"}},
		{"missing file", []string{"--operation", "InterpretReplica", "--desired", missing},
			"InterpretReplica", []string{"--desired", missing}},
		{"malformed yaml", []string{"--operation", "InterpretReplica", "--desired", bad},
			"InterpretReplica", []string{"--desired", bad, "yaml"}},
		{"malformed status items", []string{"--operation", "AggregateStatus", "--desired", desired, "--status-items", bad},
			"AggregateStatus", []string{"--status-items", bad}},
		{"malformed customization", []string{"--operation", "InterpretReplica", "--desired", desired, "--customization", bad},
			"InterpretReplica", []string{"--customization", bad}},
		{"object without kind", []string{"--operation", "InterpretReplica", "--desired", noKind},
			"InterpretReplica", []string{"--desired", noKind, "Kind"}},
		{"no object", []string{"--operation", "InterpretReplica"}, "InterpretReplica", []string{"--desired or --observed"}},
		{"retain needs both", []string{"--operation", "Retain", "--desired", desired}, "Retain", []string{"--observed"}},
		{"revise needs replicas", []string{"--operation", "ReviseReplica", "--desired", desired}, "ReviseReplica", []string{"--replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := interpretJSON(t, tt.args...)
			if code != 1 || got.Results != nil || got.Operation != tt.wantOp {
				t.Errorf("interpret %v = %d, %+v; want exit 1 and an error for %q", tt.args, code, got, tt.wantOp)
			}
			for _, s := range tt.wantError {
				if !strings.Contains(got.Error, s) {
					t.Errorf("interpret %v error = %q; want it to contain %q", tt.args, got.Error, s)
				}
			}
		})
	}
}

func TestInterpretYAMLOutput(t *testing.T) {
	desired := writeFile(t, "cloneset.yaml", cloneSet)
	for _, args := range [][]string{
		{"interpret", "--operation", "InterpretReplica", "--desired", desired, "-o", "yaml"},
		{"interpret", "--operation", "InterpretReplica", "--desired", desired}, // yaml is the default
	} {
		code, out, _ := run(t, args...)
		var got envelope
		if err := yaml.Unmarshal([]byte(out), &got); err != nil || code != 0 {
			t.Fatalf("%v = %d, %q (%v); want YAML and exit 0", args, code, out, err)
		}
		if got.Operation != "InterpretReplica" || got.Results["replica"] != 3.0 || strings.HasPrefix(out, "{") {
			t.Errorf("%v printed %q; want YAML with replica 3", args, out)
		}
	}
	code, out, _ := run(t, "interpret", "--operation", "Nope", "--desired", desired, "-o", "yaml")
	if code != 1 || !strings.Contains(out, "error: unknown operation") {
		t.Errorf("yaml error = %d, %q; want exit 1 and an error key", code, out)
	}
}

func TestInterpretUnknownOutputFormat(t *testing.T) {
	code, _, errOut := run(t, "interpret", "--operation", "InterpretReplica", "-o", "xml")
	if code != 1 || !strings.Contains(errOut, `unknown output format "xml"`) {
		t.Errorf("-o xml = %d, %q; want exit 1 and an output format error", code, errOut)
	}
}

func TestInterpretListBuiltins(t *testing.T) {
	code, out, _ := run(t, "interpret", "--list-builtins", "-o", "json")
	var got struct{ Builtins []builtin }
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("--list-builtins = %d, %q (%v)", code, out, err)
	}
	byKind := map[string]builtin{}
	for _, b := range got.Builtins {
		byKind[b.APIVersion+"/"+b.Kind] = b
	}
	want := map[string]builtin{
		"apps.kruise.io/v1alpha1/SidecarSet": {APIVersion: "apps.kruise.io/v1alpha1", Kind: "SidecarSet", Source: "thirdparty",
			Operations: []string{"InterpretReplica", "Retain", "AggregateStatus", "InterpretStatus", "InterpretHealth", "InterpretDependency"}},
		"apps.kruise.io/v1beta1/StatefulSet": {APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Source: "thirdparty",
			Operations: []string{"InterpretReplica", "ReviseReplica", "Retain", "AggregateStatus", "InterpretStatus", "InterpretHealth", "InterpretDependency"}},
		"v1/Secret": {APIVersion: "v1", Kind: "Secret", Source: "native", Operations: []string{"Retain", "InterpretStatus"}},
	}
	for key, w := range want {
		if diff := cmp.Diff(w, byKind[key]); diff != "" {
			t.Errorf("--list-builtins %s (-want +got):\n%s", key, diff)
		}
	}
	if len(got.Builtins) < 7+len(nativeKinds) {
		t.Errorf("--list-builtins listed %d kinds; want at least %d", len(got.Builtins), 7+len(nativeKinds))
	}
}
