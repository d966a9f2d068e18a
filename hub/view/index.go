package view

import (
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// Index names.
const (
	// ByKind indexes objects and bindings by "<group>/<Kind>" of their key
	// (store.ObjectRef; "" for the legacy group).
	ByKind = "kind"
	// ByNamespace indexes objects and bindings by the namespace of their
	// key ("" for cluster-scoped ones).
	ByNamespace = "namespace"
	// ByCluster indexes bindings by the clusters they target
	// (spec.clusters): a cluster's works are those of its bindings.
	ByCluster = "cluster"
)

// KeyIndexers are ByKind and ByNamespace, for objects and bindings.
func KeyIndexers() cache.Indexers {
	return cache.Indexers{
		ByKind: func(o any) ([]string, error) {
			ref, ok := store.ParseObjectKey(o.(*Object).Key)
			if !ok {
				return nil, nil
			}
			return []string{ref.Group + "/" + ref.Kind}, nil
		},
		ByNamespace: func(o any) ([]string, error) {
			ref, ok := store.ParseObjectKey(o.(*Object).Key)
			if !ok {
				return nil, nil
			}
			return []string{ref.Namespace}, nil
		},
	}
}

// BindingIndexers are KeyIndexers and ByCluster, for bindings decoded by
// Bindings.
func BindingIndexers() cache.Indexers {
	idx := KeyIndexers()
	idx[ByCluster] = func(o any) ([]string, error) {
		b, ok := o.(*Object).Value.(*workv1alpha1.ResourceBinding)
		if !ok || b == nil {
			return nil, nil
		}
		names := make([]string, 0, len(b.Spec.Clusters))
		for _, tc := range b.Spec.Clusters {
			names = append(names, tc.Name)
		}
		return names, nil
	}
	return idx
}
