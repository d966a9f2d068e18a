package native

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// reviseFields names, per kind, the spec field that holds the replica count.
var reviseFields = map[schema.GroupVersionKind]string{
	deploymentGVK:  "replicas",
	replicaSetGVK:  "replicas",
	statefulSetGVK: "replicas",
	jobGVK:         "parallelism",
}

// ReviseReplica sets the replica field of obj to replica, in place, and
// returns obj. An absent field stays absent (Karmada's helper.ApplyReplica);
// a field that is not an int64 is an error.
func (*Interpreter) ReviseReplica(obj *unstructured.Unstructured, replica int64) (*unstructured.Unstructured, error) {
	field, ok := reviseFields[obj.GroupVersionKind()]
	if !ok {
		return nil, notFound(configv1alpha1.InterpreterOperationReviseReplica, obj.GroupVersionKind())
	}
	_, exists, err := unstructured.NestedInt64(obj.Object, "spec", field)
	if err != nil {
		return nil, err
	}
	if exists {
		if err := unstructured.SetNestedField(obj.Object, replica, "spec", field); err != nil {
			return nil, err
		}
	}
	return obj, nil
}
