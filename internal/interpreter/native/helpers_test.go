package native

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

// obj decodes a YAML object the way the suite does (int64/float64 numbers).
func obj(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return u
}

// item is a status item for cluster with the status given as YAML.
func item(t testing.TB, cluster, status string) configv1alpha1.AggregatedStatusItem {
	t.Helper()
	it := configv1alpha1.AggregatedStatusItem{ClusterName: cluster, Applied: true}
	if status != "" {
		js, err := yaml.YAMLToJSON([]byte(status))
		if err != nil {
			t.Fatalf("yaml: %v", err)
		}
		it.Status = &runtime.RawExtension{Raw: js}
	}
	return it
}

// nested returns the JSON of a nested field, "<absent>" when missing.
func nested(t testing.TB, u *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil {
		t.Fatalf("field %v: %v", path, err)
	}
	if !ok {
		return "<absent>"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", path, err)
	}
	return string(raw)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
