package apply

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// crdGK is the group and kind of a CustomResourceDefinition.
var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// manifest is one decoded object of a work.
type manifest struct {
	// ordinal is the index in the work's manifests.
	ordinal int
	// obj is the desired object as the hub sent it; nil when it does not
	// decode (err says why).
	obj *unstructured.Unstructured
	err error
}

// identity names the manifest for Acks and status reports.
func (m manifest) identity() *agentv1.ObjectIdentity {
	id := &agentv1.ObjectIdentity{Ordinal: int32(m.ordinal)}
	if m.obj == nil {
		return id
	}
	gvk := m.obj.GroupVersionKind()
	id.Group, id.Version, id.Kind = gvk.Group, gvk.Version, gvk.Kind
	id.Namespace, id.Name = m.obj.GetNamespace(), m.obj.GetName()
	return id
}

// decode parses a work's manifests, keeping manifest order. A manifest that
// is not a Kubernetes object with apiVersion, kind and name gets an error.
func decode(raw [][]byte) []manifest {
	out := make([]manifest, len(raw))
	for i, b := range raw {
		out[i] = manifest{ordinal: i}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(b); err != nil {
			out[i].err = fmt.Errorf("manifest %d: %w", i, err)
			continue
		}
		if obj.GetName() == "" {
			out[i].err = fmt.Errorf("manifest %d: %s has no metadata.name", i, obj.GetKind())
			continue
		}
		out[i].obj = obj
	}
	return out
}

// rank orders kinds for applying: Namespaces, then CRDs, then the rest.
func rank(m manifest) int {
	if m.obj == nil {
		return 2
	}
	gk := m.obj.GroupVersionKind().GroupKind()
	switch {
	case gk == schema.GroupKind{Kind: "Namespace"}:
		return 0
	case gk == crdGK:
		return 1
	default:
		return 2
	}
}

// applyOrder returns the manifests in the order they are applied:
// Namespaces, CRDs, then the rest, each group in manifest order.
func applyOrder(ms []manifest) []manifest {
	out := append([]manifest(nil), ms...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// options are a work's ApplyOptions with the defaults filled in.
type options struct {
	strategy agentv1.ApplyStrategy
	conflict agentv1.ConflictResolution
}

func optionsOf(o *agentv1.ApplyOptions) options {
	out := options{strategy: o.GetStrategy(), conflict: o.GetConflictResolution()}
	if out.strategy == agentv1.ApplyStrategy_APPLY_STRATEGY_UNSPECIFIED {
		out.strategy = agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY
	}
	if out.conflict == agentv1.ConflictResolution_CONFLICT_RESOLUTION_UNSPECIFIED {
		out.conflict = agentv1.ConflictResolution_CONFLICT_RESOLUTION_ABORT
	}
	return out
}
