package native

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

func TestReflectStatus(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // raw JSON, "<nil>" for no status
	}{
		{
			name: "custom resource: whole status",
			doc:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nstatus: {ready: true, count: 2}",
			want: `{"count":2,"ready":true}`,
		},
		{
			name: "deployment with all-zero status reports nothing",
			doc:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {resourcetemplate.karmada.io/generation: '0'}}\nstatus: {conditions: []}",
			want: "<nil>",
		},
		{
			name: "clusterip service reports nothing",
			doc:  "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ClusterIP}\nstatus: {loadBalancer: {}}",
			want: "<nil>",
		},
		{
			name: "deployment fields and generations",
			doc: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 3, annotations: {resourcetemplate.karmada.io/generation: '7'}}\n" +
				"status: {replicas: 2, readyReplicas: 1, observedGeneration: 3, collisionCount: 1}",
			want: `{"generation":3,"resourceTemplateGeneration":7,"observedGeneration":3,"replicas":2,"readyReplicas":1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := New().ReflectStatus(obj(t, tt.doc))
			if err != nil {
				t.Fatalf("ReflectStatus: %v", err)
			}
			got := "<nil>"
			if raw != nil {
				got = string(raw.Raw)
			}
			if got != tt.want {
				t.Errorf("ReflectStatus = %s; want %s", got, tt.want)
			}
		})
	}
}

func TestHookEnabled(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	tests := []struct {
		gvk  schema.GroupVersionKind
		op   configv1alpha1.InterpreterOperation
		want bool
	}{
		{widget, configv1alpha1.InterpreterOperationInterpretStatus, true},
		{widget, configv1alpha1.InterpreterOperationInterpretHealth, false},
		{deploymentGVK, configv1alpha1.InterpreterOperationInterpretComponent, false},
		{deploymentGVK, configv1alpha1.InterpreterOperationPrune, false},
		{pvGVK, configv1alpha1.InterpreterOperationRetain, true},
		{pvGVK, configv1alpha1.InterpreterOperationAggregateStatus, true},
		{serviceImportGVK, configv1alpha1.InterpreterOperationInterpretDependency, true},
		{jobGVK, configv1alpha1.InterpreterOperationInterpretHealth, false},
	}
	for _, tt := range tests {
		if got := New().HookEnabled(tt.gvk, tt.op); got != tt.want {
			t.Errorf("HookEnabled(%s, %s) = %t; want %t", tt.gvk, tt.op, got, tt.want)
		}
	}
	if _, err := New().GetComponents(nil); err != ErrComponentsNotImplemented {
		t.Errorf("GetComponents error = %v; want %v", err, ErrComponentsNotImplemented)
	}
}

func TestInterpretHealth(t *testing.T) {
	tests := []struct {
		name, doc string
		want      bool
	}{
		{"daemonset rolled out", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, generation: 2}\nstatus: {observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3}", true},
		{"daemonset not available", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d, generation: 2}\nstatus: {observedGeneration: 2, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2}", false},
		{"replicaset short", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, generation: 1}\nspec: {replicas: 3}\nstatus: {observedGeneration: 1, availableReplicas: 2}", false},
		{"deployment without replicas", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 1}\nstatus: {observedGeneration: 1}", true},
		{"pdb healthy", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nstatus: {currentHealthy: 3, desiredHealthy: 3}", true},
		{"pvc pending", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nstatus: {phase: Pending}", false},
		{"pod running without ready condition", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running}", false},
	}
	for _, tt := range tests {
		got, err := New().InterpretHealth(obj(t, tt.doc))
		if err != nil || got != tt.want {
			t.Errorf("InterpretHealth(%s) = %t, %v; want %t", tt.name, got, err, tt.want)
		}
	}
}
