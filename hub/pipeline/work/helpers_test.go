package work

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tetherproj/tether/hub/pipeline/work/worktest"
)

// The fixtures shared with hub/render (worktest).
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
func decoded(t testing.TB, w *Work) *unstructured.Unstructured {
	t.Helper()
	return worktest.Manifest(t, w.Upsert.GetWorkKey(), w.Upsert.GetManifests())
}

// mustRender renders in with the real interpreter.
func mustRender(t testing.TB, in Input) *Work {
	t.Helper()
	w, err := Render(context.Background(), in, testInterpreter(t))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return w
}
