package main

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/test/kit"
)

// cloneSetCRD is a minimal CloneSet CRD (the schema preserves unknown
// fields): enough for the members to store CloneSets, not to run them.
//
//go:embed cloneset-crd.json
var cloneSetCRD []byte

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// members are the demo's clusters: two small edge clusters in eu and a
// bigger regional one in us. Their labels are what the hub would select on
// once agents report them; the nodes carry the standard topology labels.
func members() []kit.ClusterSpec {
	node := func(name, cpu, memory, region, zone string) kit.NodeSpec {
		return kit.NodeSpec{Name: name, CPU: cpu, Memory: memory, Labels: map[string]string{
			"topology.kubernetes.io/region": region,
			"topology.kubernetes.io/zone":   zone,
		}}
	}
	return []kit.ClusterSpec{
		{
			Name:   "edge-1",
			Labels: map[string]string{"region": "eu", "provider": "kwok", "tier": "edge"},
			Nodes:  []kit.NodeSpec{node("edge-1-a", "8", "16Gi", "eu", "eu-a")},
		},
		{
			Name:   "edge-2",
			Labels: map[string]string{"region": "eu", "provider": "kwok", "tier": "edge"},
			Nodes:  []kit.NodeSpec{node("edge-2-a", "8", "16Gi", "eu", "eu-b"), node("edge-2-b", "8", "16Gi", "eu", "eu-b")},
		},
		{
			Name:   "regional-1",
			Labels: map[string]string{"region": "us", "provider": "kwok", "tier": "regional"},
			Nodes:  []kit.NodeSpec{node("regional-1-a", "16", "64Gi", "us", "us-a"), node("regional-1-b", "16", "64Gi", "us", "us-b")},
		},
	}
}

// crdTimeout bounds the wait for a CRD to be Established.
const crdTimeout = 30 * time.Second

// installCRDs puts the CloneSet CRD into every member before the agents
// start, so that their first heartbeats list the kind and the hub can
// schedule the CloneSet there.
func installCRDs(ctx context.Context, env *kit.Env) error {
	for _, c := range env.Clusters {
		if err := installCRD(ctx, c); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	return nil
}

func installCRD(ctx context.Context, c *kit.Cluster) error {
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON(cloneSetCRD); err != nil {
		return fmt.Errorf("CloneSet CRD: %w", err)
	}
	client := c.Dynamic().Resource(crdGVR)
	if _, err := client.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CRD %s: %w", crd.GetName(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, crdTimeout)
	defer cancel()
	for {
		got, err := client.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err == nil && established(got) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not Established: %w", crd.GetName(), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
