package clientapi_test

import (
	"fmt"
	"strings"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
)

// TestApplyRefusesBeyondBounds: replicas of built-in workloads, label
// counts, array lengths, annotations and customizations whose Lua the
// interpreter would refuse are REJECTED naming the field; the same
// objects within bounds are accepted.
func TestApplyRefusesBeyondBounds(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	deploy := func(replicas string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: " + replicas + "}\n"
	}
	labels := func(n int) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: l\n  labels:\n")
		for i := range n {
			fmt.Fprintf(&b, "    l%d: v\n", i)
		}
		return b.String()
	}
	ric := func(script string) string {
		return "apiVersion: config.tether.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: r}\n" +
			"spec:\n  target: {apiVersion: example.com/v1, kind: Widget}\n  customizations:\n    replicaResource:\n      luaScript: |\n        " +
			strings.ReplaceAll(script, "\n", "\n        ") + "\n"
	}
	tests := []struct {
		name, input string
		field       string // "" when accepted
	}{
		{"replicas 0", deploy("0"), ""},
		{"replicas 2^31-1", deploy("2147483647"), ""},
		{"replicas -1", deploy("-1"), "spec.replicas"},
		{"replicas 2^31", deploy("2147483648"), "spec.replicas"},
		{"replicas 1.5", deploy("1.5"), "spec.replicas"},
		{"replicas of a custom kind are not ours to check", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: -1}\n", ""},
		{"1000 labels", labels(1000), ""},
		{"1001 labels", labels(1001), "metadata.labels"},
		{"an array of 10,000 items", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: [" + strings.Repeat("1,", 9999) + "1]\n", ""},
		{"an array of 10,001 items", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: [[" + strings.Repeat("1,", 10000) + "1]]\n", "x[0]"},
		{"annotation with a bad key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, annotations: {'a b': x}}\n", "metadata.annotations"},
		{"a valid customization", ric("function GetReplicas(obj)\n  return 1, {}\nend"), ""},
		{"a customization without its function", ric("function Other(obj) return 1 end"), "spec.customizations.replicaResource.luaScript"},
		{"a customization that loops", ric("function GetReplicas(obj)\n  while true do end\nend"), "spec.customizations.replicaResource.luaScript"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.apply(t, []byte(tt.input), true)
			r := resp.GetResults()[0]
			if tt.field == "" {
				if r.GetOutcome() == hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
					t.Fatalf("Apply(%s) = REJECTED %s %v; want accepted", tt.name, r.GetMessage(), r.GetFieldErrors())
				}
				return
			}
			if r.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED || len(r.GetFieldErrors()) == 0 || r.GetFieldErrors()[0].GetField() != tt.field {
				t.Fatalf("Apply(%s) = %s %s %v; want REJECTED at %s", tt.name, r.GetOutcome(), r.GetMessage(), r.GetFieldErrors(), tt.field)
			}
		})
	}
}

// TestReadsRefuseBadRanges: page sizes outside 0..5000 and negative watch
// revisions are INVALID_ARGUMENT naming the field.
func TestReadsRefuseBadRanges(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	for _, n := range []int32{-1, 5001} {
		_, err := c.objects.List(ctx(t), &hubv1.ListRequest{Kind: "ConfigMap", PageSize: n})
		if err == nil || !strings.Contains(err.Error(), "page_size") {
			t.Errorf("List(page_size %d) = %v; want INVALID_ARGUMENT naming page_size", n, err)
		}
	}
	if _, err := c.objects.List(ctx(t), &hubv1.ListRequest{Kind: "ConfigMap", PageSize: 5000}); err != nil {
		t.Errorf("List(page_size 5000) = %v; want served", err)
	}
	ws, err := c.objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "ConfigMap", StartRevision: -1})
	if err == nil {
		_, err = ws.Recv()
	}
	if err == nil || !strings.Contains(err.Error(), "start_revision") {
		t.Errorf("Watch(start_revision -1) = %v; want INVALID_ARGUMENT naming start_revision", err)
	}
}
