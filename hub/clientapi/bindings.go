package clientapi

import (
	"context"
	"encoding/json"
	"fmt"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// isBindingKind reports whether kr is one of the binding kinds, which the
// hub stores under store.BindingKey of their template, not under
// store.ObjectKey: Get finds them by name there.
func isBindingKind(kr kindRef) bool {
	return kr.own && kr.group == workv1alpha1.GroupVersion.Group &&
		(kr.kind == workv1alpha1.KindResourceBinding || kr.kind == workv1alpha1.KindClusterResourceBinding)
}

// getBinding returns a binding by name (as GetPlacement names it), with its
// per-cluster aggregated status. Binding keys are those of their
// templates, so this scans the stored bindings: it serves `describe`, not
// bulk reads.
func (b *backend) getBinding(ctx context.Context, key store.ObjectRef, ref *hubv1.ObjectRef) (*hubv1.Object, error) {
	kvs, _, err := b.st.List(ctx, store.BindingsPrefix)
	if err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		var m struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if json.Unmarshal(kv.Value, &m) != nil || m.Metadata.Name != key.Name || m.Metadata.Namespace != key.Namespace {
			continue
		}
		obj, err := withRevision(kv.Value, kv.Revision)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kv.Key, err)
		}
		js, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		return &hubv1.Object{
			Ref:        &hubv1.ObjectRef{ApiVersion: workv1alpha1.GroupVersion.String(), Kind: key.Kind, Namespace: key.Namespace, Name: key.Name},
			Revision:   kv.Revision,
			ObjectJson: js,
		}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrNotFound, describe(ref))
}
