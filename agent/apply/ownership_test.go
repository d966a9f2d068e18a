package apply

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWorkLabelValue(t *testing.T) {
	tests := []struct{ key, want string }{
		{"web-1", "web-1"},
		{"default/web", "sha256-"},
		{strings.Repeat("a", 64), "sha256-"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := WorkLabelValue(tt.key); !strings.HasPrefix(got, tt.want) || len(got) > 63 {
				t.Errorf("WorkLabelValue(%q) = %q; want prefix %q, at most 63 characters", tt.key, got, tt.want)
			}
		})
	}
}

func TestMergeKept(t *testing.T) {
	tests := []struct {
		name              string
		desired, observed map[string]string
		record            string
		want              map[string]string
	}{
		{"desired wins", map[string]string{"a": "hub"}, map[string]string{"a": "member"}, "", map[string]string{"a": "hub"}},
		{"member's own key kept", map[string]string{"a": "1"}, map[string]string{"m": "x"}, "a", map[string]string{"a": "1", "m": "x"}},
		{"key the template dropped removed", nil, map[string]string{"a": "1", "m": "x"}, "a", map[string]string{"m": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mergeKept(tt.desired, tt.observed, tt.record)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mergeKept() diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyOrder(t *testing.T) {
	mk := func(apiVersion, kind string) manifest {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		return manifest{obj: u}
	}
	ms := []manifest{mk("apps/v1", "Deployment"), mk("apiextensions.k8s.io/v1", "CustomResourceDefinition"), mk("v1", "Namespace"), mk("v1", "ConfigMap")}
	for i := range ms {
		ms[i].ordinal = i
	}
	var got []int
	for _, m := range applyOrder(ms) {
		got = append(got, m.ordinal)
	}
	if diff := cmp.Diff([]int{2, 1, 0, 3}, got); diff != "" {
		t.Errorf("applyOrder() diff (-want +got):\n%s", diff)
	}
}
