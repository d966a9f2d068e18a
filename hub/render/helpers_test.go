package render

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/pipeline/work/worktest"
)

// The fixtures shared with hub/pipeline/work (worktest).
const deploymentYAML = worktest.DeploymentYAML

var (
	testInterpreter = worktest.Interpreter
	object          = worktest.Object
	divided         = worktest.Divided
	duplicated      = worktest.Duplicated
	binding         = worktest.Binding
	target          = worktest.Target
	cluster         = worktest.Cluster
	regionRegistry  = worktest.RegionRegistry
	toJSON          = worktest.JSON
)

// decoded is the single manifest of a work, decoded.
func decoded(t testing.TB, w *work.Work) *unstructured.Unstructured {
	t.Helper()
	return worktest.Manifest(t, w.Upsert.GetWorkKey(), w.Upsert.GetManifests())
}

// mustRender renders in with the real interpreter.
func mustRender(t testing.TB, in work.Input) *work.Work {
	t.Helper()
	w, err := work.Render(context.Background(), in, testInterpreter(t))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return w
}

// failingInterpreter enables ReviseReplica for every kind and fails it.
type failingInterpreter struct{}

func (failingInterpreter) HookEnabled(schema.GroupVersionKind, configv1alpha1.InterpreterOperation) bool {
	return true
}

func (failingInterpreter) ReviseReplica(context.Context, *unstructured.Unstructured, int64) (*unstructured.Unstructured, error) {
	return nil, errors.New("webhook timed out")
}

func attached(clusters ...workv1alpha1.TargetCluster) *workv1alpha1.ResourceBinding {
	b := binding(nil, 0)
	b.Name = "cfg-configmap"
	b.Spec.RequiredBy = []workv1alpha1.BindingSnapshot{{Namespace: "default", Name: "web-deployment", Clusters: clusters}}
	return b
}
