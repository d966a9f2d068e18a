package membership

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/store"
)

// TestRegisterRefusesInvalidLabels: labels a cluster asserts at
// registration must be Kubernetes labels; a bad one is refused, named,
// before the token is used or a record written.
func TestRegisterRefusesInvalidLabels(t *testing.T) {
	r, _, st := newRegistry(t)
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	bad := &agentv1.Topology{Labels: map[string]string{"tier": "edge", "team": "a b"}}
	_, err = r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t), Topology: bad})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `label "team" value "a b"`) {
		t.Fatalf("Register(label team=\"a b\") = %v; want ErrInvalid naming the label", err)
	}
	if _, err := st.Get(ctx, store.ClusterKey("edge-1")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cluster record after the refused registration: %v; want none", err)
	}
	good := &agentv1.Topology{Labels: map[string]string{"tier": "edge"}}
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t), Topology: good}); err != nil {
		t.Fatalf("Register(valid labels) with the single-use token = %v; want it unused by the refusal", err)
	}
}

// TestRegisterCordonsNewClusters: with Config.NewClustersCordoned the
// record Register creates carries the cordon taint.
func TestRegisterCordonsNewClusters(t *testing.T) {
	r, _, st := newRegistry(t)
	r.cfg.NewClustersCordoned = true
	ctx := testCtx(t)
	tok, _, err := r.CreateToken(ctx, TokenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(ctx, Request{Token: tok, Cluster: "edge-1", CSRPEM: csr(t)}); err != nil {
		t.Fatal(err)
	}
	kv, err := st.Get(ctx, store.ClusterKey("edge-1"))
	if err != nil {
		t.Fatal(err)
	}
	var c clusterv1alpha1.Cluster
	if err := json.Unmarshal(kv.Value, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Spec.Taints) != 1 || c.Spec.Taints[0].Key != TaintCordoned {
		t.Errorf("new cluster's taints = %v; want %s", c.Spec.Taints, TaintCordoned)
	}
}
