package native

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

func TestGetDependencies(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string
	}{
		{
			name: "projected, csi, ephemeral containers; default service account and empty names ignored",
			doc: `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  serviceAccountName: default
  imagePullSecrets: [{name: ''}]
  containers: [{name: a, env: [{name: X, valueFrom: {configMapKeyRef: {name: cm-env, key: k}}}]}]
  ephemeralContainers: [{name: dbg, envFrom: [{secretRef: {name: dbg-secret}}]}]
  volumes:
  - name: p
    projected: {sources: [{configMap: {name: cm-proj}}, {secret: {name: s-proj}}, {serviceAccountToken: {path: t}}]}
  - name: c
    csi: {driver: d, nodePublishSecretRef: {name: s-csi}}`,
			want: `[{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","name":"cm-env"},` +
				`{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","name":"cm-proj"},` +
				`{"apiVersion":"v1","kind":"Secret","namespace":"ns","name":"dbg-secret"},` +
				`{"apiVersion":"v1","kind":"Secret","namespace":"ns","name":"s-csi"},` +
				`{"apiVersion":"v1","kind":"Secret","namespace":"ns","name":"s-proj"}]`,
		},
		{
			name: "no references give nil",
			doc:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: a}]}}}",
			want: `null`,
		},
		{
			name: "service import",
			doc:  "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {name: web, namespace: ns}",
			want: `[{"apiVersion":"v1","kind":"Service","namespace":"ns","name":"derived-web"},` +
				`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","namespace":"ns","labelSelector":{"matchLabels":{"kubernetes.io/service-name":"derived-web"}}}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps, err := New().GetDependencies(obj(t, tt.doc))
			if err != nil {
				t.Fatalf("GetDependencies: %v", err)
			}
			if got, _ := json.Marshal(deps); string(got) != tt.want {
				t.Errorf("GetDependencies = %s; want %s", got, tt.want)
			}
		})
	}
}

func TestVerifyDependencies(t *testing.T) {
	tests := []struct {
		name string
		deps []configv1alpha1.DependentObjectReference
		want string
	}{
		{"valid", []configv1alpha1.DependentObjectReference{{APIVersion: "v1", Kind: "Secret", Name: "s"}}, "<nil>"},
		{
			"missing kind and apiVersion",
			[]configv1alpha1.DependentObjectReference{{Name: "s"}},
			"[dependencies[0].apiVersion: Required value: missing required apiVersion, dependencies[0].kind: Required value: missing required kind]",
		},
		{
			"bad selector",
			[]configv1alpha1.DependentObjectReference{{APIVersion: "v1", Kind: "Secret", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a b": "c"}}}},
			`dependencies[0].labelSelector.matchLabels: Invalid value: "a b": name part must consist of alphanumeric characters`,
		},
	}
	for _, tt := range tests {
		// The detail text comes from apimachinery; compare its stable prefix.
		if got := errString(VerifyDependencies(tt.deps)); !strings.HasPrefix(got, tt.want) {
			t.Errorf("VerifyDependencies(%s) = %s; want %s", tt.name, got, tt.want)
		}
	}
}
