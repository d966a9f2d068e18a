package codec_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// minimal returns a small valid document of a kind in an API group version.
func minimal(apiVersion, kind string) string {
	head := "apiVersion: " + apiVersion + "\nkind: " + kind + "\n"
	switch kind {
	case "PropagationPolicy", "OverridePolicy", "RolloutPolicy":
		return head + "metadata: {name: a, namespace: default}\nspec: {resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]}\n"
	case "ResourceBinding":
		return head + "metadata: {name: a, namespace: default}\nspec: {resource: {apiVersion: v1, kind: ConfigMap, name: c}}\n"
	case "ClusterResourceBinding":
		return head + "metadata: {name: a}\nspec: {resource: {apiVersion: v1, kind: Namespace, name: ns1}}\n"
	case "ResourceInterpreterCustomization":
		return head + "metadata: {name: a}\nspec: {target: {apiVersion: example.io/v1, kind: Foo}, customizations: {replicaResource: {luaScript: 'function GetReplicas(o) return 1 end'}}}\n"
	case "ResourceInterpreterWebhookConfiguration":
		return head + "metadata: {name: a}\nwebhooks: [{name: hook.example.com, clientConfig: {url: 'https://hook.example.com/x'}, interpreterContextVersions: [v1alpha1]}]\n"
	case "Cluster":
		return head + "metadata: {name: m1}\nspec: {region: eu}\n"
	case "WorkloadRebalancer":
		return head + "metadata: {name: a}\nspec: {workloads: [{apiVersion: apps/v1, kind: Deployment, namespace: default, name: web}], ttlSecondsAfterFinished: 60}\n"
	case "FederatedResourceQuota":
		return head + "metadata: {name: a, namespace: default}\nspec: {overall: {cpu: 4}}\n"
	default:
		return head + "metadata: {name: a}\nspec: {resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]}\n"
	}
}

func TestDecodeAliasGroups(t *testing.T) {
	tests := []struct {
		tether, karmada, kind string
		want                  any
	}{
		{"policy.tether.io/v1alpha1", "policy.karmada.io/v1alpha1", "PropagationPolicy", &policyv1alpha1.PropagationPolicy{}},
		{"policy.tether.io/v1alpha1", "policy.karmada.io/v1alpha1", "ClusterPropagationPolicy", &policyv1alpha1.ClusterPropagationPolicy{}},
		{"policy.tether.io/v1alpha1", "policy.karmada.io/v1alpha1", "OverridePolicy", &policyv1alpha1.OverridePolicy{}},
		{"policy.tether.io/v1alpha1", "policy.karmada.io/v1alpha1", "ClusterOverridePolicy", &policyv1alpha1.ClusterOverridePolicy{}},
		{"config.tether.io/v1alpha1", "config.karmada.io/v1alpha1", "ResourceInterpreterCustomization", &configv1alpha1.ResourceInterpreterCustomization{}},
		{"config.tether.io/v1alpha1", "config.karmada.io/v1alpha1", "ResourceInterpreterWebhookConfiguration", &configv1alpha1.ResourceInterpreterWebhookConfiguration{}},
		{"cluster.tether.io/v1alpha1", "cluster.karmada.io/v1alpha1", "Cluster", &clusterv1alpha1.Cluster{}},
		{"work.tether.io/v1alpha1", "work.karmada.io/v1alpha2", "ResourceBinding", &workv1alpha1.ResourceBinding{}},
		{"work.tether.io/v1alpha1", "work.karmada.io/v1alpha2", "ClusterResourceBinding", &workv1alpha1.ClusterResourceBinding{}},
		{"apps.tether.io/v1alpha1", "apps.karmada.io/v1alpha1", "WorkloadRebalancer", &appsv1alpha1.WorkloadRebalancer{}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			fromTether := decodeValid(t, minimal(tt.tether, tt.kind))
			fromKarmada := decodeValid(t, minimal(tt.karmada, tt.kind))
			if reflect.TypeOf(fromTether) != reflect.TypeOf(tt.want) || reflect.TypeOf(fromKarmada) != reflect.TypeOf(tt.want) {
				t.Fatalf("Decode(%s) = %T and %T; want %T for both groups", tt.kind, fromTether, fromKarmada, tt.want)
			}
			if got := fromKarmada.GetObjectKind().GroupVersionKind().GroupVersion().String(); got != tt.karmada {
				t.Errorf("Decode(%s in %s) apiVersion = %s; want it kept as written", tt.kind, tt.karmada, got)
			}
			if !codec.Canonical(fromKarmada) {
				t.Fatalf("Canonical(%s) = false; want true", tt.kind)
			}
			if diff := cmp.Diff(fromTether, fromKarmada); diff != "" {
				t.Errorf("Canonical(Decode(%s in %s)) differs from the Tether group's (-tether +karmada):\n%s", tt.kind, tt.karmada, diff)
			}
		})
	}
}

func decodeValid(t *testing.T, doc string) codec.Object {
	t.Helper()
	obj, err := codec.Decode([]byte(doc))
	if err != nil {
		t.Fatalf("Decode(%q) = %v; want no error", doc, err)
	}
	if errs := obj.Validate(); len(errs) > 0 {
		t.Fatalf("Validate(%q) = %v; want no errors", doc, errs)
	}
	return obj
}

func TestEncodeKeepsGroupAsWritten(t *testing.T) {
	obj := decodeValid(t, pp)
	js, err := codec.Encode(obj)
	if err != nil || !strings.Contains(string(js), `"apiVersion":"policy.karmada.io/v1alpha1"`) {
		t.Errorf("Encode(Decode(Karmada policy)) = %s, %v; want the Karmada apiVersion", js, err)
	}
	codec.Canonical(obj)
	y, err := codec.EncodeYAML(obj)
	if err != nil || !strings.HasPrefix(string(y), "apiVersion: policy.tether.io/v1alpha1\n") {
		t.Errorf("EncodeYAML(Canonical(policy)) = %s, %v; want the Tether apiVersion first", y, err)
	}
}

func TestKnownAndOwnGroup(t *testing.T) {
	tests := []struct {
		apiVersion, kind string
		known, own       bool
	}{
		{"policy.tether.io/v1alpha1", "PropagationPolicy", true, true},
		{"policy.karmada.io/v1alpha1", "OverridePolicy", true, true},
		{"policy.karmada.io/v1alpha1", "FederatedResourceQuota", true, true},
		{"policy.karmada.io/v1alpha1", "ClusterTaintPolicy", false, true},
		{"config.karmada.io/v1alpha1", "ResourceInterpreterCustomization", true, true},
		{"work.karmada.io/v1alpha2", "ResourceBinding", true, true},
		{"work.karmada.io/v1alpha1", "Work", false, true},
		{"policy.tether.io/v1beta1", "PropagationPolicy", false, true},
		{"apps/v1", "Deployment", false, false},
		{"v1", "ConfigMap", false, false},
		{"not/a/version", "X", false, false},
	}
	for _, tt := range tests {
		if got := codec.Known(tt.apiVersion, tt.kind); got != tt.known {
			t.Errorf("Known(%s, %s) = %v; want %v", tt.apiVersion, tt.kind, got, tt.known)
		}
		if got := codec.OwnGroup(tt.apiVersion); got != tt.own {
			t.Errorf("OwnGroup(%s) = %v; want %v", tt.apiVersion, got, tt.own)
		}
	}
}

func TestDecodeUnknownKind(t *testing.T) {
	tests := []struct{ apiVersion, kind string }{
		{"apps/v1", "Deployment"},
		{"policy.karmada.io/v1alpha1", "ClusterTaintPolicy"},
		{"policy.karmada.io/v1alpha1", "RolloutPolicy"}, // Tether's own kind: no Karmada alias
	}
	for _, tt := range tests {
		doc := "apiVersion: " + tt.apiVersion + "\nkind: " + tt.kind + "\nmetadata: {name: a}\n"
		_, err := codec.Decode([]byte(doc))
		want := "unknown kind " + tt.kind + " in apiVersion " + tt.apiVersion
		if !errors.Is(err, codec.ErrUnknownKind) || !strings.Contains(err.Error(), want) {
			t.Errorf("Decode(%s %s) = %v; want ErrUnknownKind saying %q", tt.apiVersion, tt.kind, err, want)
		}
	}
}

func TestKindsAreComplete(t *testing.T) {
	for _, k := range codec.Kinds() {
		obj := k.New()
		if obj == nil {
			t.Fatalf("Kinds()[%s].New() = nil", k.GVK)
		}
		if got, ok := codec.Lookup(k.GVK.GroupVersion().String(), k.GVK.Kind); !ok || got.GVK != k.GVK {
			t.Errorf("Lookup(%s) = %v, %v; want the kind itself", k.GVK, got, ok)
		}
		doc := minimal(k.GVK.GroupVersion().String(), k.GVK.Kind)
		decoded := decodeValid(t, doc)
		if reflect.TypeOf(decoded) != reflect.TypeOf(obj) {
			t.Errorf("Decode(%s) = %T; want %T", k.GVK, decoded, obj)
		}
		if k.Namespaced != (decoded.GetNamespace() != "") {
			t.Errorf("Kinds()[%s].Namespaced = %v; the minimal document disagrees", k.GVK, k.Namespaced)
		}
	}
}

func TestClone(t *testing.T) {
	obj := decodeValid(t, pp)
	clone, err := codec.Clone(obj)
	if err != nil {
		t.Fatalf("Clone(policy) = %v", err)
	}
	clone.SetDefaults()
	if diff := cmp.Diff(decodeValid(t, pp), obj); diff != "" {
		t.Errorf("SetDefaults(Clone(policy)) changed the original (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(obj, clone); diff == "" {
		t.Errorf("SetDefaults(Clone(policy)) changed nothing; want defaults on the clone")
	}
}
