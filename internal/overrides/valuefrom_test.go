package overrides

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// site clusters: the same rule must give each its own value.
func siteCluster(name, site string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{"site": site},
		Annotations: map[string]string{"example.com/endpoint": "https://" + site + ".local:8443", "example.com/mirror": site + ".mirror.io"}}}
}

var (
	fromName     = policyv1alpha1.ClusterValueSource{ClusterName: &policyv1alpha1.ClusterNameSource{}}
	fromSite     = policyv1alpha1.ClusterValueSource{ClusterLabel: &policyv1alpha1.ClusterKeySource{Key: "site"}}
	fromEndpoint = policyv1alpha1.ClusterValueSource{ClusterAnnotation: &policyv1alpha1.ClusterKeySource{Key: "example.com/endpoint"}}
	fromMirror   = policyv1alpha1.ClusterValueSource{ClusterAnnotation: &policyv1alpha1.ClusterKeySource{Key: "example.com/mirror"}}
)

const configMapYAML = `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default}
data:
  app.json: '{"site":"unset","port":80}'
  app.yaml: "site: unset\nport: 80\n"
`

func TestValueFromEachOverrider(t *testing.T) {
	cases := []struct {
		name     string
		manifest string
		o        policyv1alpha1.Overriders
		pointer  string
		want     map[string]string // cluster → JSON at pointer
	}{
		{"plaintext add env value from label", deploymentYAML, policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			{Path: "/spec/template/spec/containers/0/env", Operator: add, Value: json.RawMessage(`[{"name":"SITE"}]`)},
			{Path: "/spec/template/spec/containers/0/env/0/value", Operator: add, ValueFrom: &fromSite},
		}}, "/spec/template/spec/containers/0/env", map[string]string{
			"edge-1": `[{"name":"SITE","value":"paris"}]`, "edge-2": `[{"name":"SITE","value":"lyon"}]`}},
		{"plaintext replace from cluster name", deploymentYAML, policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			{Path: "/metadata/name", Operator: replace, ValueFrom: &fromName},
		}}, "/metadata/name", map[string]string{"edge-1": `"edge-1"`, "edge-2": `"edge-2"`}},
		{"labels add from label and name beside a static key", deploymentYAML, policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: add, Value: map[string]string{"tier": "edge"}, ValueFrom: map[string]policyv1alpha1.ClusterValueSource{"site": fromSite, "cluster": fromName}},
		}}, "/metadata/labels", map[string]string{
			"edge-1": `{"app":"web","cluster":"edge-1","site":"paris","tier":"edge"}`, "edge-2": `{"app":"web","cluster":"edge-2","site":"lyon","tier":"edge"}`}},
		{"annotations add from annotation", deploymentYAML, policyv1alpha1.Overriders{AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: add, ValueFrom: map[string]policyv1alpha1.ClusterValueSource{"endpoint": fromEndpoint}},
		}}, "/metadata/annotations", map[string]string{
			"edge-1": `{"endpoint":"https://paris.local:8443"}`, "edge-2": `{"endpoint":"https://lyon.local:8443"}`}},
		{"image registry replace from annotation", deploymentYAML, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Component: policyv1alpha1.Registry, Operator: replace, ValueFrom: &fromMirror},
		}}, "/spec/template/spec/containers/0/image", map[string]string{"edge-1": `"paris.mirror.io/nginx:1.19"`, "edge-2": `"lyon.mirror.io/nginx:1.19"`}},
		{"image tag replace from label", deploymentYAML, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Component: policyv1alpha1.Tag, Operator: replace, ValueFrom: &fromSite},
		}}, "/spec/template/spec/containers/1/image", map[string]string{"edge-1": `"envoy:paris"`, "edge-2": `"envoy:lyon"`}},
		{"command add after static values", deploymentYAML, policyv1alpha1.Overriders{CommandOverrider: []policyv1alpha1.CommandArgsOverrider{
			{ContainerName: "web", Operator: add, Value: []string{"--site"}, ValueFrom: []policyv1alpha1.ClusterValueSource{fromSite}},
		}}, "/spec/template/spec/containers/0/command", map[string]string{
			"edge-1": `["nginx","-g","daemon off;","--site","paris"]`, "edge-2": `["nginx","-g","daemon off;","--site","lyon"]`}},
		{"args add from name and annotation", deploymentYAML, policyv1alpha1.Overriders{ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{
			{ContainerName: "sidecar", Operator: add, ValueFrom: []policyv1alpha1.ClusterValueSource{fromName, fromEndpoint}},
		}}, "/spec/template/spec/containers/1/args", map[string]string{
			"edge-1": `["edge-1","https://paris.local:8443"]`, "edge-2": `["edge-2","https://lyon.local:8443"]`}},
		{"fieldOverrider json replace from label", configMapYAML, policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{
			{FieldPath: "/data/app.json", JSON: []policyv1alpha1.JSONPatchOperation{{SubPath: "/site", Operator: replace, ValueFrom: &fromSite}}},
		}}, "/data/app.json", map[string]string{"edge-1": `"{\"site\":\"paris\",\"port\":80}"`, "edge-2": `"{\"site\":\"lyon\",\"port\":80}"`}},
		{"fieldOverrider yaml add from cluster name", configMapYAML, policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{
			{FieldPath: "/data/app.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/cluster", Operator: add, ValueFrom: &fromName}}},
		}}, "/data/app.yaml", map[string]string{"edge-1": `"cluster: edge-1\nport: 80\nsite: unset\n"`, "edge-2": `"cluster: edge-2\nport: 80\nsite: unset\n"`}},
	}
	clusters := []*clusterv1alpha1.Cluster{siteCluster("edge-1", "paris"), siteCluster("edge-2", "lyon")}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			ops := []policyv1alpha1.OverridePolicy{op("p", nil, tt.o)}
			written := jsonOf(t, ops)
			for _, c := range clusters {
				res, err := Apply(object(t, tt.manifest), c, nil, ops)
				if err != nil {
					t.Fatalf("Apply(%s, %s) error = %v", tt.name, c.Name, err)
				}
				if got := field(t, res.Object, tt.pointer); got != tt.want[c.Name] {
					t.Errorf("Apply(%s, %s) %s = %s; want %s", tt.name, c.Name, tt.pointer, got, tt.want[c.Name])
				}
				if diff := cmp.Diff(jsonOf(t, tt.o), jsonOf(t, res.Overrides[0].Overriders)); diff != "" {
					t.Errorf("Apply(%s, %s) applied record is not the rule as written (-want +got):\n%s", tt.name, c.Name, diff)
				}
			}
			if got := jsonOf(t, ops); got != written {
				t.Errorf("Apply(%s) modified the policy:\n%s\nwant\n%s", tt.name, got, written)
			}
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestValueFromClusterCannotAnswer: a source the cluster cannot answer, or
// a value that cannot be used, fails the cluster's render with an error
// naming the overrider and the key; nothing is applied with an empty value.
func TestValueFromClusterCannotAnswer(t *testing.T) {
	bare := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-3", Labels: map[string]string{"other": "x"}}}
	spaced := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "edge-4",
		Labels: map[string]string{"site": "x"}, Annotations: map[string]string{"example.com/endpoint": "not a label value!", "example.com/mirror": "UPPER CASE"}}}
	cases := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		o       policyv1alpha1.Overriders
		want    []string
	}{
		{"missing label in plaintext", bare, policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
			{Path: "/metadata/labels/site", Operator: add, ValueFrom: &fromSite}}},
			[]string{"plaintext[0]", `valueFrom.clusterLabel: cluster edge-3 has no label "site"`}},
		{"missing annotation in args", bare, policyv1alpha1.Overriders{ArgsOverrider: []policyv1alpha1.CommandArgsOverrider{
			{ContainerName: "web", Operator: add, ValueFrom: []policyv1alpha1.ClusterValueSource{fromName, fromEndpoint}}}},
			[]string{"argsOverrider[0]", "valueFrom[1]", `cluster edge-3 has no annotation "example.com/endpoint"`}},
		{"missing label in labels", bare, policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: add, ValueFrom: map[string]policyv1alpha1.ClusterValueSource{"site": fromSite}}}},
			[]string{"labelsOverrider[0]", "valueFrom[site]", `has no label "site"`}},
		{"missing label in fieldOverrider", bare, policyv1alpha1.Overriders{FieldOverrider: []policyv1alpha1.FieldOverrider{
			{FieldPath: "/metadata/name", YAML: []policyv1alpha1.YAMLPatchOperation{{SubPath: "/a", Operator: add, ValueFrom: &fromSite}}}}},
			[]string{"fieldOverrider[0]", "yaml[0]", `has no label "site"`}},
		{"missing label in image", bare, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Component: policyv1alpha1.Tag, Operator: replace, ValueFrom: &fromSite}}},
			[]string{"imageOverrider[0]", `has no label "site"`}},
		{"invalid label value", spaced, policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
			{Operator: add, ValueFrom: map[string]policyv1alpha1.ClusterValueSource{"endpoint": fromEndpoint}}}},
			[]string{"labelsOverrider[0]", "valueFrom[endpoint]", `"not a label value!", not a valid label value`}},
		{"invalid tag", spaced, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Component: policyv1alpha1.Tag, Operator: replace, ValueFrom: &fromEndpoint}}},
			[]string{"imageOverrider[0]", "neither an image tag nor a digest"}},
		{"unparsable image", spaced, policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
			{Component: policyv1alpha1.Registry, Operator: replace, ValueFrom: &fromMirror}}},
			[]string{"imageOverrider[0]", `the cluster's value "UPPER CASE" makes image`}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Apply(object(t, deploymentYAML), tt.cluster, nil, []policyv1alpha1.OverridePolicy{op("p", nil, tt.o)})
			if err == nil {
				t.Fatalf("Apply(%s) = %v; want an error", tt.name, res.Object.Object)
			}
			for _, w := range append(tt.want, "OverridePolicy default/p overrideRules[0]") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Apply(%s) error = %q; want it to say %q", tt.name, err, w)
				}
			}
		})
	}
}
