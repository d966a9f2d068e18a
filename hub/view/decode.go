package view

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
	"github.com/tetherproj/tether/hub/store"
)

// Decoder turns the stored bytes of key into the value the view holds.
// It must not keep value: the view drops the bytes once decoded.
type Decoder func(key string, value []byte) (any, error)

// Objects decodes anything under /tether/objects/ (templates and Tether's
// own objects alike) into *unstructured.Unstructured: readers that need a
// typed policy convert the few they read.
func Objects(key string, value []byte) (any, error) {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(value); err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return obj, nil
}

// Bindings decodes a binding without its per-cluster aggregated status
// items (fold.DecodeWithoutItems) into *workv1alpha1.ResourceBinding:
// hub/aggregate folds those from the agents' reports itself, no other
// reader needs them, and for a binding placed on a thousand clusters they
// are most of its bytes.
func Bindings(key string, value []byte) (any, error) {
	b, err := fold.DecodeWithoutItems(value)
	if err != nil {
		return nil, fmt.Errorf("decode binding %s: %w", key, err)
	}
	return b, nil
}

// Clusters decodes a Cluster record into *clusterv1alpha1.Cluster.
func Clusters(key string, value []byte) (any, error) {
	c := &clusterv1alpha1.Cluster{}
	if err := json.Unmarshal(value, c); err != nil {
		return nil, fmt.Errorf("decode cluster %s: %w", key, err)
	}
	return c, nil
}

// Rollouts decodes a rollout record (hub/rollout) into *rollout.Record.
func Rollouts(key string, value []byte) (any, error) {
	r, err := rollout.DecodeRecord(value)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	return r, nil
}

// HubPrefixes are the prefixes of the objects, bindings, clusters and
// rollout records each hub replica's view holds, with their decoders and
// indexes; the hub adds those of the records it follows through Records
// (revocation.Prefix, roles.Prefix).
func HubPrefixes() []Prefix {
	return []Prefix{
		{Prefix: store.ObjectsPrefix, Decode: Objects, Indexers: KeyIndexers()},
		{Prefix: store.BindingsPrefix, Decode: Bindings, Indexers: BindingIndexers()},
		{Prefix: store.ClustersPrefix, Decode: Clusters},
		{Prefix: store.RolloutsPrefix, Decode: Rollouts},
	}
}
