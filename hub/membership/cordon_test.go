package membership

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/store"
)

// TestNewClustersCordoned: with NewClustersCordoned, the record a first
// heartbeat creates carries the cordon taint; without, it carries none.
// Labels that are not Kubernetes labels are left out of it.
func TestNewClustersCordoned(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	defer st.Close()
	leases := liveness.New(liveness.Config{})
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "cordoned", false: "open"}[on]
		hb := heartbeat()
		hb.Topology = &agentv1.Topology{Labels: map[string]string{"bad key!": "x"}}
		leases.Heartbeat(name, hb)
		if err := NewRegistrar(st, leases, hclog.NewNullLogger(), NewClustersCordoned(on)).sync(ctx); err != nil {
			t.Fatal(err)
		}
		kv, err := st.Get(ctx, store.ClusterKey(name))
		if err != nil {
			t.Fatal(err)
		}
		var c clusterv1alpha1.Cluster
		if err := json.Unmarshal(kv.Value, &c); err != nil {
			t.Fatal(err)
		}
		got := len(c.Spec.Taints) == 1 && c.Spec.Taints[0].Key == TaintCordoned && c.Spec.Taints[0].Effect == corev1.TaintEffectNoSchedule
		if got != on || (!on && len(c.Spec.Taints) != 0) {
			t.Errorf("NewClustersCordoned(%t): new record's taints = %v; want cordoned: %t", on, c.Spec.Taints, on)
		}
		if len(c.Labels) != 0 {
			t.Errorf("new record's labels = %v; want the invalid label left out", c.Labels)
		}
	}
}

// TestValidateLabels: label keys and values as Kubernetes checks them,
// the bad one named.
func TestValidateLabels(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   string // "" for valid
	}{
		{"none", nil, ""},
		{"valid", map[string]string{"tier": "edge", "example.com/zone": "a-1", "empty": ""}, ""},
		{"bad key", map[string]string{"ok": "x", "bad key!": "x"}, `label key "bad key!"`},
		{"bad prefix", map[string]string{"-x.com/a": "x"}, `label key "-x.com/a"`},
		{"bad value", map[string]string{"tier": "a b"}, `label "tier" value "a b"`},
		{"long value", map[string]string{"tier": strings.Repeat("a", 64)}, `label "tier" value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateLabels(tt.labels)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("ValidateLabels(%v) = %v; want %q", tt.labels, err, tt.want)
			}
		})
	}
}
