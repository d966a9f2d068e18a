package apply

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter/native"
)

// TestReadOnlyView: only under READ_ONLY, an object without the template
// generation annotation is seen with generation "0"; one that has it, and
// every object under the other strategies, is seen as it is.
func TestReadOnlyView(t *testing.T) {
	ro := &agentv1.ApplyOptions{Strategy: agentv1.ApplyStrategy_APPLY_STRATEGY_READ_ONLY}
	cases := []struct {
		name  string
		opts  *agentv1.ApplyOptions
		has   map[string]string
		want  string
		found bool
	}{
		{"read-only, no annotation", ro, nil, "0", true},
		{"read-only, annotated", ro, map[string]string{native.GenerationAnnotation: "4"}, "4", true},
		{"server-side apply", &agentv1.ApplyOptions{}, nil, "", false},
		{"update", &agentv1.ApplyOptions{Strategy: agentv1.ApplyStrategy_APPLY_STRATEGY_UPDATE}, nil, "", false},
	}
	for _, tc := range cases {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
		obj.SetAnnotations(tc.has)
		got, found := readOnlyView(tc.opts, obj).GetAnnotations()[native.GenerationAnnotation]
		if got != tc.want || found != tc.found {
			t.Errorf("%s: generation annotation %q (present %v); want %q (present %v)", tc.name, got, found, tc.want, tc.found)
		}
	}
}
