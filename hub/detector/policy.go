package detector

import (
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// isPolicyKey reports whether ref is where a (Cluster)PropagationPolicy is
// stored, in Tether's or Karmada's group.
func isPolicyKey(ref store.ObjectRef) bool {
	if ref.Group != policyv1alpha1.GroupName && ref.Group != policyv1alpha1.KarmadaGroupName {
		return false
	}
	return ref.Kind == policyv1alpha1.KindPropagationPolicy || ref.Kind == policyv1alpha1.KindClusterPropagationPolicy
}

// isOverrideKey reports whether ref is where an (Cluster)OverridePolicy is
// stored; only their existence matters here (dependentOverrides).
func isOverrideKey(ref store.ObjectRef) bool {
	if ref.Group != policyv1alpha1.GroupName && ref.Group != policyv1alpha1.KarmadaGroupName {
		return false
	}
	return ref.Kind == policyv1alpha1.KindOverridePolicy || ref.Kind == policyv1alpha1.KindClusterOverridePolicy
}

// policyRefOf is the policy stored at ref.
func policyRefOf(ref store.ObjectRef) bind.PolicyRef {
	if ref.Kind == policyv1alpha1.KindClusterPropagationPolicy {
		return bind.PolicyRef{Cluster: true, Name: ref.Name}
	}
	return bind.PolicyRef{Namespace: ref.Namespace, Name: ref.Name}
}

// decodePolicy reads the policy stored in kv at ref. Validation is the API
// server's job; the detector only applies the defaults so that bindings
// carry the effective placement.
func decodePolicy(ref store.ObjectRef, kv store.KV) (*bind.Policy, error) {
	var doc struct {
		Metadata metav1.ObjectMeta              `json:"metadata"`
		Spec     policyv1alpha1.PropagationSpec `json:"spec"`
	}
	if err := json.Unmarshal(kv.Value, &doc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", policyRefOf(ref), err)
	}
	p := &bind.Policy{
		Ref:      policyRefOf(ref),
		ID:       strconv.FormatInt(kv.CreateRevision, 10),
		Revision: kv.Revision,
		Spec:     doc.Spec,
		Deleting: doc.Metadata.DeletionTimestamp != nil,
	}
	if !p.Ref.Cluster {
		pp := policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace}, Spec: p.Spec}
		pp.SetDefaults()
		p.Spec = pp.Spec
	} else {
		p.Spec.SetDefaults()
	}
	return p, nil
}

// decodeTemplate reads the template stored in kv at ref.
func decodeTemplate(ref store.ObjectRef, kv store.KV) (*bind.Template, error) {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(kv.Value); err != nil {
		return nil, fmt.Errorf("decode %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
	}
	return &bind.Template{Ref: ref, Obj: obj, Revision: kv.Revision}, nil
}

// templateOf is the template the view holds at ref (shared: read only;
// the interpreter is given copies).
func templateOf(ref store.ObjectRef, o *view.Object) (*bind.Template, error) {
	if o.Err != nil {
		return nil, fmt.Errorf("decode %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, o.Err)
	}
	return &bind.Template{Ref: ref, Obj: o.Value.(*unstructured.Unstructured), Revision: o.Revision}, nil
}

// policyOf is the policy the view holds at ref, decoded as decodePolicy
// decodes stored bytes.
func policyOf(ref store.ObjectRef, o *view.Object) (*bind.Policy, error) {
	data, err := objectJSON(o)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", policyRefOf(ref), err)
	}
	return decodePolicy(ref, store.KV{Key: o.Key, Value: data, Revision: o.Revision, CreateRevision: o.CreateRevision})
}

// overrideSelectorsOf is decodeOverrideSelectors of the override policy
// the view holds.
func overrideSelectorsOf(o *view.Object) ([]policyv1alpha1.ResourceSelector, error) {
	data, err := objectJSON(o)
	if err != nil {
		return nil, err
	}
	return decodeOverrideSelectors(data)
}

// objectJSON is the JSON of the object the view holds, or why it has
// none.
func objectJSON(o *view.Object) ([]byte, error) {
	if o.Err != nil {
		return nil, o.Err
	}
	return o.Value.(*unstructured.Unstructured).MarshalJSON()
}
