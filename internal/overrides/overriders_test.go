package overrides

import (
	"encoding/json"
	"testing"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

const (
	add     = policyv1alpha1.OverriderOpAdd
	remove  = policyv1alpha1.OverriderOpRemove
	replace = policyv1alpha1.OverriderOpReplace
)

type overriderCase struct {
	name    string
	kind    string // manifest to use; empty means deploymentYAML
	o       policyv1alpha1.Overriders
	pointer string // where to look in the result
	want    string // JSON at pointer, or "<missing>"
}

// runOverriderCases applies each case's overriders through Apply, as one
// OverridePolicy, and checks one field of the result.
func runOverriderCases(t *testing.T, cases []overriderCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			manifest := deploymentYAML
			if tt.kind != "" {
				manifest = tt.kind
			}
			res, err := Apply(object(t, manifest), testCluster(), nil, []policyv1alpha1.OverridePolicy{op("p", nil, tt.o)})
			if err != nil {
				t.Fatalf("Apply(%s) error = %v", tt.name, err)
			}
			if got := field(t, res.Object, tt.pointer); got != tt.want {
				t.Errorf("Apply(%s) %s = %s; want %s", tt.name, tt.pointer, got, tt.want)
			}
		})
	}
}

func TestImageOverrider(t *testing.T) {
	img := func(c policyv1alpha1.ImageComponent, o policyv1alpha1.OverriderOperator, v string, pred string) policyv1alpha1.Overriders {
		io := policyv1alpha1.ImageOverrider{Component: c, Operator: o, Value: v}
		if pred != "" {
			io.Predicate = &policyv1alpha1.ImagePredicate{Path: pred}
		}
		return policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{io}}
	}
	cronJob := `
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj, namespace: default}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: job, image: busybox:1.36}]
`
	pod := `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: a, image: nginx:1}]
`
	runOverriderCases(t, []overriderCase{
		{"every container of a Deployment", "", img(policyv1alpha1.Registry, replace, "hub.local", ""),
			"/spec/template/spec/containers/1/image", `"hub.local/envoy:1"`},
		{"initContainers untouched", "", img(policyv1alpha1.Registry, replace, "hub.local", ""),
			"/spec/template/spec/initContainers/0/image", `"busybox:1"`},
		{"Pod containers", pod, img(policyv1alpha1.Tag, replace, "2", ""), "/spec/containers/0/image", `"nginx:2"`},
		{"CronJob untouched without predicate", cronJob, img(policyv1alpha1.Registry, replace, "hub.local", ""),
			"/spec/jobTemplate/spec/template/spec/containers/0/image", `"busybox:1.36"`},
		{"CronJob with predicate", cronJob, img(policyv1alpha1.Registry, replace, "hub.local", "/spec/jobTemplate/spec/template/spec/containers/0/image"),
			"/spec/jobTemplate/spec/template/spec/containers/0/image", `"hub.local/busybox:1.36"`},
		{"predicate on an initContainer", "", img(policyv1alpha1.Repository, add, "-musl", "/spec/template/spec/initContainers/0/image"),
			"/spec/template/spec/initContainers/0/image", `"busybox-musl:1"`},
		{"predicate touches only its path", "", img(policyv1alpha1.Tag, remove, "", "/spec/template/spec/containers/0/image"),
			"/spec/template/spec/containers/1/image", `"envoy:1"`},
	})
}

func TestCommandArgsOverrider(t *testing.T) {
	cmd := func(field string, container string, o policyv1alpha1.OverriderOperator, v ...string) policyv1alpha1.Overriders {
		c := []policyv1alpha1.CommandArgsOverrider{{ContainerName: container, Operator: o, Value: v}}
		if field == fieldArgs {
			return policyv1alpha1.Overriders{ArgsOverrider: c}
		}
		return policyv1alpha1.Overriders{CommandOverrider: c}
	}
	const web, side = "/spec/template/spec/containers/0", "/spec/template/spec/containers/1"
	runOverriderCases(t, []overriderCase{
		{"command add appends", "", cmd(fieldCommand, "web", add, "-c", "x"), web + "/command", `["nginx","-g","daemon off;","-c","x"]`},
		{"command remove drops every equal item", "", cmd(fieldCommand, "web", remove, "-g", "nginx", "absent"), web + "/command", `["daemon off;"]`},
		{"command add on absent field", "", cmd(fieldCommand, "sidecar", add, "envoy"), side + "/command", `["envoy"]`},
		{"command remove on absent field gives []", "", cmd(fieldCommand, "sidecar", remove, "envoy"), side + "/command", `[]`},
		{"command replace is not an operator: absent becomes []", "", cmd(fieldCommand, "sidecar", replace, "x"), side + "/command", `[]`},
		{"command of another container untouched", "", cmd(fieldCommand, "sidecar", add, "x"), web + "/command", `["nginx","-g","daemon off;"]`},
		{"args add on absent field", "", cmd(fieldArgs, "web", add, "--v=2"), web + "/args", `["--v=2"]`},
		{"args remove", "", cmd(fieldArgs, "web", remove, "--v=2"), web + "/args", `[]`},
		{"unknown container untouched", "", cmd(fieldArgs, "nope", add, "x"), web + "/args", `<missing>`},
	})
}

func TestLabelsAnnotationsOverrider(t *testing.T) {
	la := func(labels bool, o policyv1alpha1.OverriderOperator, kv ...string) policyv1alpha1.Overriders {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		l := []policyv1alpha1.LabelAnnotationOverrider{{Operator: o, Value: m}}
		if labels {
			return policyv1alpha1.Overriders{LabelsOverrider: l}
		}
		return policyv1alpha1.Overriders{AnnotationsOverrider: l}
	}
	runOverriderCases(t, []overriderCase{
		{"label add", "", la(true, add, "tier", "web"), "/metadata/labels", `{"app":"web","tier":"web"}`},
		{"label add overwrites", "", la(true, add, "app", "api"), "/metadata/labels", `{"app":"api"}`},
		{"label add with slash", "", la(true, add, "app.kubernetes.io/name", "web"), "/metadata/labels/app.kubernetes.io~1name", `"web"`},
		{"label replace", "", la(true, replace, "app", "api", "absent", "x"), "/metadata/labels", `{"app":"api"}`},
		{"label remove", "", la(true, remove, "app", "", "absent", ""), "/metadata/labels", `{}`},
		{"annotation add creates the map", "", la(false, add, "a", "1"), "/metadata/annotations", `{"a":"1"}`},
		{"annotation replace of missing map skipped", "", la(false, replace, "a", "1"), "/metadata/annotations", `<missing>`},
		{"annotation remove of missing map skipped", "", la(false, remove, "a", ""), "/metadata/annotations", `<missing>`},
	})
}

func TestPlaintextOverrider(t *testing.T) {
	pt := func(items ...policyv1alpha1.PlaintextOverrider) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{Plaintext: items}
	}
	item := func(o policyv1alpha1.OverriderOperator, path, value string) policyv1alpha1.PlaintextOverrider {
		return policyv1alpha1.PlaintextOverrider{Operator: o, Path: path, Value: json.RawMessage(value)}
	}
	runOverriderCases(t, []overriderCase{
		{"replace", "", pt(item(replace, "/spec/replicas", "7")), "/spec/replicas", `7`},
		{"add nested", "", pt(item(add, "/spec/template/spec/nodeSelector", `{"disk":"ssd"}`)), "/spec/template/spec/nodeSelector", `{"disk":"ssd"}`},
		{"add appends with -", "", pt(item(add, "/spec/template/spec/containers/-", `{"name":"c"}`)), "/spec/template/spec/containers/2/name", `"c"`},
		{"remove", "", pt(item(remove, "/metadata/labels/app", "")), "/metadata/labels", `{}`},
		{"add without value adds null", "", pt(item(add, "/spec/paused", "")), "/spec/paused", `null`},
		{"path without leading slash adds at the root (evanphx quirk, as in Karmada)", "", pt(item(add, "spec/x", "1")), "/x", `1`},
		{"items apply in order as one patch", "", pt(item(add, "/spec/x", `1`), item(replace, "/spec/x", `2`)), "/spec/x", `2`},
	})
}

func TestFieldOverrider(t *testing.T) {
	cm := `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default}
data:
  config.json: '{"b":1,"a":{"x":true}}'
  config.yaml: |
    z: 1
    a:
      list: [1, 2]
`
	jsonOp := func(o policyv1alpha1.OverriderOperator, sub, v string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.json",
			JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: sub, Operator: o, Value: json.RawMessage(v)}}}}}
	}
	yamlOp := func(o policyv1alpha1.OverriderOperator, sub, v string) policyv1alpha1.Overriders {
		return policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.yaml",
			YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: sub, Operator: o, Value: json.RawMessage(v)}}}}}
	}
	runOverriderCases(t, []overriderCase{
		{"json add keeps key order, compact", cm, jsonOp(add, "/c", `"new"`), "/data/config.json", `"{\"b\":1,\"a\":{\"x\":true},\"c\":\"new\"}"`},
		{"json replace", cm, jsonOp(replace, "/a/x", `false`), "/data/config.json", `"{\"b\":1,\"a\":{\"x\":false}}"`},
		{"json remove", cm, jsonOp(remove, "/b", ``), "/data/config.json", `"{\"a\":{\"x\":true}}"`},
		{"yaml add sorts keys", cm, yamlOp(add, "/b", `"s"`), "/data/config.yaml", `"a:\n  list:\n  - 1\n  - 2\nb: s\nz: 1\n"`},
		{"yaml replace", cm, yamlOp(replace, "/a/list/0", `9`), "/data/config.yaml", `"a:\n  list:\n  - 9\n  - 2\nz: 1\n"`},
		{"yaml remove", cm, yamlOp(remove, "/z", ``), "/data/config.yaml", `"a:\n  list:\n  - 1\n  - 2\n"`},
		{"no operations empties the field, as in Karmada", cm,
			policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/data/config.json"}}}, "/data/config.json", `""`},
	})
}

// TestOverriderKindsOrder checks the fixed order inside one rule: the
// plaintext (last) wins over the image overrider and the labels overrider
// on the same fields, and the field overrider sees the labels overrider's
// result.
func TestOverriderKindsOrder(t *testing.T) {
	o := policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{
			{Operator: replace, Path: "/spec/template/spec/containers/0/image", Value: json.RawMessage(`"plain:1"`)},
			{Operator: replace, Path: "/metadata/labels/x", Value: json.RawMessage(`"plaintext"`)},
		},
		AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"doc": `{"k":1}`}}},
		FieldOverrider: []policyv1alpha1.FieldOverrider{{FieldPath: "/metadata/annotations/doc",
			JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/k", Operator: replace, Value: json.RawMessage(`2`)}}}},
		LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: add, Value: map[string]string{"x": "labels"}}},
		ImageOverrider:  []policyv1alpha1.ImageOverrider{{Component: policyv1alpha1.Tag, Operator: replace, Value: "img"}},
	}
	res, err := Apply(object(t, deploymentYAML), testCluster(), nil, []policyv1alpha1.OverridePolicy{op("p", nil, o)})
	if err != nil {
		t.Fatalf("Apply error = %v", err)
	}
	for pointer, want := range map[string]string{
		"/spec/template/spec/containers/0/image": `"plain:1"`,
		"/spec/template/spec/containers/1/image": `"envoy:img"`,
		"/metadata/labels/x":                     `"plaintext"`,
		"/metadata/annotations/doc":              `"{\"k\":2}"`,
	} {
		if got := field(t, res.Object, pointer); got != want {
			t.Errorf("Apply %s = %s; want %s", pointer, got, want)
		}
	}
}
