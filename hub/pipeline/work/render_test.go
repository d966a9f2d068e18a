package work

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/native"
)

func nested(t *testing.T, obj *unstructured.Unstructured, fields ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if err != nil {
		t.Fatalf("field %v: %v", fields, err)
	}
	return v
}

func TestRender(t *testing.T) {
	eu, us := cluster("eu-1", "eu"), cluster("us-1", "us")
	cases := []struct {
		name    string
		in      Input
		path    []string
		want    any
		wantNil [][]string
	}{{
		name: "divided replicas revised to the cluster's share",
		in:   Input{Template: object(t, deploymentYAML), Binding: binding(divided(), 6, target("eu-1", 2), target("us-1", 4)), Cluster: eu},
		path: []string{"spec", "replicas"}, want: int64(2),
	}, {
		name: "duplicated keeps the template's replicas",
		in:   Input{Template: object(t, deploymentYAML), Binding: binding(duplicated(), 6, target("eu-1", 6), target("us-1", 6)), Cluster: us},
		path: []string{"spec", "replicas"}, want: int64(6),
	}, {
		name: "override for the cluster's region",
		in: Input{Template: object(t, deploymentYAML), Binding: binding(duplicated(), 6, target("eu-1", 6)), Cluster: eu,
			Overrides: []policyv1alpha1.OverridePolicy{regionRegistry("eu", "us")}},
		path: []string{"spec", "template", "spec", "containers"},
		want: []any{map[string]any{"name": "web", "image": "eu.registry.io/nginx:1.25"}},
	}, {
		name: "override of another region does not apply",
		in: Input{Template: object(t, deploymentYAML), Binding: binding(duplicated(), 6, target("us-1", 6)), Cluster: us,
			Overrides: []policyv1alpha1.OverridePolicy{regionRegistry("eu")}},
		path: []string{"spec", "template", "spec", "containers"},
		want: []any{map[string]any{"name": "web", "image": "nginx:1.25"}},
	}, {
		name: "hub fields pruned",
		in:   Input{Template: object(t, deploymentYAML), Binding: binding(duplicated(), 6, target("eu-1", 6)), Cluster: eu},
		wantNil: [][]string{{"status"}, {"metadata", "uid"}, {"metadata", "resourceVersion"}, {"metadata", "generation"},
			{"metadata", "creationTimestamp"}, {"metadata", "ownerReferences"}, {"metadata", "managedFields"},
			{"metadata", "annotations", "deployment.kubernetes.io/revision"}},
		path: []string{"metadata", "annotations", "team"}, want: "blue",
	}, {
		name: "ownership labels name the binding",
		in:   Input{Template: object(t, deploymentYAML), Binding: binding(duplicated(), 6, target("eu-1", 6)), Cluster: eu},
		path: []string{"metadata", "labels"},
		want: map[string]any{"app": "web", LabelManaged: "true", LabelBindingID: "b-1"},
	}, {
		name: "ownership annotations name the binding, the work and the template generation",
		in:   Input{Template: object(t, deploymentYAML), Binding: binding(duplicated(), 6, target("eu-1", 6)), Cluster: eu},
		path: []string{"metadata", "annotations"},
		want: map[string]any{"team": "blue", AnnotationBindingNamespace: "default", AnnotationBindingName: "web-deployment",
			AnnotationWorkKey: "apps/Deployment/default/web", native.GenerationAnnotation: "3"},
	}, {
		name: "CRD kind without a revise hook passes through divided",
		in: Input{Template: object(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {replicas: 6}\n"),
			Binding: binding(divided(), 6, target("eu-1", 2)), Cluster: eu},
		path: []string{"spec", "replicas"}, want: int64(6),
	}, {
		name: "dependency placed by requiredBy only",
		in: Input{Template: object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: default}\ndata: {k: v}\n"),
			Binding: attached(target("eu-1", 2)), Cluster: eu},
		path: []string{"data"}, want: map[string]any{"k": "v"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			template := tc.in.Template.DeepCopy()
			got := decoded(t, mustRender(t, tc.in))
			if diff := cmp.Diff(tc.want, nested(t, got, tc.path...)); diff != "" {
				t.Errorf("Render(%s) %v (-want +got):\n%s", tc.name, tc.path, diff)
			}
			for _, p := range tc.wantNil {
				if v := nested(t, got, p...); v != nil {
					t.Errorf("Render(%s) %v = %v; want it pruned", tc.name, p, v)
				}
			}
			if diff := cmp.Diff(template.Object, tc.in.Template.Object); diff != "" {
				t.Errorf("Render(%s) modified the template (-before +after):\n%s", tc.name, diff)
			}
		})
	}
}

// attached is the binding of a dependency no policy claims: no placement,
// only the clusters of the binding that requires it.
func attached(clusters ...workv1alpha1.TargetCluster) *workv1alpha1.ResourceBinding {
	b := binding(nil, 0)
	b.Name = "cfg-configmap"
	b.Spec.RequiredBy = []workv1alpha1.BindingSnapshot{{Namespace: "default", Name: "web-deployment", Clusters: clusters}}
	return b
}

func TestRenderWireForm(t *testing.T) {
	b := binding(duplicated(), 6, target("eu-1", 6))
	b.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	keep := true
	b.Spec.PreserveResourcesOnDeletion = &keep
	w := mustRender(t, Input{Template: object(t, deploymentYAML), Binding: b, Cluster: cluster("eu-1", "eu"),
		Overrides: []policyv1alpha1.OverridePolicy{regionRegistry("eu")}})
	up := w.Upsert
	if up.GetWorkKey() != "apps/Deployment/default/web" {
		t.Errorf("WorkKey = %q; want apps/Deployment/default/web", up.GetWorkKey())
	}
	if len(up.GetVersion()) != 64 {
		t.Errorf("Version = %q; want 64 hex digits", up.GetVersion())
	}
	wantOpts := &agentv1.ApplyOptions{Strategy: agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY,
		ConflictResolution: agentv1.ConflictResolution_CONFLICT_RESOLUTION_OVERWRITE, DeletionPolicy: agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN}
	if up.GetApplyOptions().String() != wantOpts.String() {
		t.Errorf("ApplyOptions = %v; want %v", up.GetApplyOptions(), wantOpts)
	}
	if got := up.GetBinding(); got.GetNamespace() != "default" || got.GetName() != "web-deployment" || got.GetUid() != "b-1" {
		t.Errorf("Binding = %v; want default/web-deployment uid b-1", got)
	}
	if _, ok := w.AppliedOverrides["policy.karmada.io/applied-overrides"]; !ok {
		t.Errorf("AppliedOverrides = %v; want the applied-overrides record", w.AppliedOverrides)
	}
}

func TestRenderVersion(t *testing.T) {
	eu, eu2, us := cluster("eu-1", "eu"), cluster("eu-2", "eu"), cluster("us-1", "us")
	ops := []policyv1alpha1.OverridePolicy{regionRegistry("eu")}
	render := func(b *workv1alpha1.ResourceBinding, c *clusterv1alpha1.Cluster, tmpl string) string {
		return mustRender(t, Input{Template: object(t, tmpl), Binding: b, Cluster: c, Overrides: ops}).Upsert.GetVersion()
	}
	dup := binding(duplicated(), 6, target("eu-1", 6), target("eu-2", 6), target("us-1", 6))
	div := binding(divided(), 6, target("eu-1", 2), target("eu-2", 2), target("us-1", 2))
	uneven := binding(divided(), 6, target("eu-1", 1), target("eu-2", 5))
	changed := deploymentYAML + "  observedGeneration: 3\n" // status only: pruned
	cases := []struct {
		name  string
		a, b  string
		equal bool
	}{
		{"same input twice", render(dup, eu, deploymentYAML), render(dup, eu, deploymentYAML), true},
		{"two clusters, same overrides", render(dup, eu, deploymentYAML), render(dup, eu2, deploymentYAML), true},
		{"same share of divided replicas", render(div, eu, deploymentYAML), render(div, eu2, deploymentYAML), true},
		{"status change is pruned", render(dup, eu, deploymentYAML), render(dup, eu, changed), true},
		{"different overrides", render(dup, eu, deploymentYAML), render(dup, us, deploymentYAML), false},
		{"different share", render(uneven, eu, deploymentYAML), render(uneven, eu2, deploymentYAML), false},
		{"template change", render(dup, eu, deploymentYAML), render(dup, eu, strings.Replace(deploymentYAML, "nginx:1.25", "nginx:1.26", 1)), false},
	}
	for _, tc := range cases {
		if (tc.a == tc.b) != tc.equal {
			t.Errorf("%s: versions %s and %s; want equal=%v", tc.name, tc.a, tc.b, tc.equal)
		}
	}
}

// TestRenderStableEncoding checks that the manifest bytes (hence the
// version) do not depend on the order in which maps were built.
func TestRenderStableEncoding(t *testing.T) {
	a := object(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: default}\ndata: {a: '1', b: '2', c: '3', d: '4'}\n")
	b := a.DeepCopy()
	b.Object["data"] = map[string]any{"d": "4", "c": "3", "b": "2", "a": "1"}
	in := Input{Binding: attached(target("eu-1", 0)), Cluster: cluster("eu-1", "eu")}
	in.Template = a
	wa := mustRender(t, in)
	in.Template = b
	wb := mustRender(t, in)
	for i := 0; i < 20; i++ {
		if w := mustRender(t, in); string(w.Upsert.GetManifests()[0]) != string(wa.Upsert.GetManifests()[0]) {
			t.Fatalf("render %d: manifest %s; want %s", i, w.Upsert.GetManifests()[0], wa.Upsert.GetManifests()[0])
		}
	}
	if wa.Upsert.GetVersion() != wb.Upsert.GetVersion() {
		t.Errorf("versions %s and %s of equal objects; want equal", wa.Upsert.GetVersion(), wb.Upsert.GetVersion())
	}
}

// failingInterpreter enables ReviseReplica for every kind and fails it.
type failingInterpreter struct{}

func (failingInterpreter) HookEnabled(schema.GroupVersionKind, configv1alpha1.InterpreterOperation) bool {
	return true
}

func (failingInterpreter) ReviseReplica(context.Context, *unstructured.Unstructured, int64) (*unstructured.Unstructured, error) {
	return nil, errors.New("webhook timed out")
}

func TestRenderErrors(t *testing.T) {
	eu := cluster("eu-1", "eu")
	badOverride := regionRegistry("eu")
	badOverride.Spec.OverrideRules[0].Overriders = policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
		Path: "/spec/nothing/here", Operator: policyv1alpha1.OverriderOpReplace, Value: []byte(`1`)}}}
	cases := []struct {
		name   string
		in     Input
		interp Interpreter
	}{
		{"missing cluster", Input{Template: object(t, deploymentYAML), Binding: binding(divided(), 6)}, testInterpreter(t)},
		{"revise fails", Input{Template: object(t, deploymentYAML), Binding: binding(divided(), 6, target("eu-1", 2)), Cluster: eu}, failingInterpreter{}},
		{"override fails", Input{Template: object(t, deploymentYAML), Binding: binding(divided(), 6, target("eu-1", 2)), Cluster: eu,
			Overrides: []policyv1alpha1.OverridePolicy{badOverride}}, testInterpreter(t)},
	}
	for _, tc := range cases {
		if w, err := Render(context.Background(), tc.in, tc.interp); err == nil {
			t.Errorf("Render(%s) = %v, nil; want an error", tc.name, w.Upsert.GetWorkKey())
		}
	}
}

func TestTargets(t *testing.T) {
	b := binding(divided(), 6, target("a", 2), target("b", 4))
	b.Spec.RequiredBy = []workv1alpha1.BindingSnapshot{
		{Name: "p1", Clusters: []workv1alpha1.TargetCluster{target("b", 1), target("c", 3)}},
		{Name: "p2", Clusters: []workv1alpha1.TargetCluster{target("c", 9), target("d", 0)}},
	}
	want := []workv1alpha1.TargetCluster{target("a", 2), target("b", 4), target("c", 3), target("d", 0)}
	if diff := cmp.Diff(want, Targets(b)); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}
	if len(b.Spec.Clusters) != 2 {
		t.Errorf("Targets modified spec.clusters: %v", b.Spec.Clusters)
	}
}
