package detector

import (
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// PolicyRef names a PropagationPolicy (Cluster false) or a
// ClusterPropagationPolicy (Cluster true, Namespace empty).
type PolicyRef struct {
	Cluster   bool
	Namespace string
	Name      string
}

func (r PolicyRef) String() string {
	if r.Cluster {
		return "ClusterPropagationPolicy " + r.Name
	}
	return "PropagationPolicy " + r.Namespace + "/" + r.Name
}

// Policy is a (Cluster)PropagationPolicy as the detector uses it.
type Policy struct {
	Ref PolicyRef
	// ID is the permanent ID recorded in claims: the etcd create revision
	// of the policy's key, so a policy recreated under the same name is a
	// different policy.
	ID string
	// Revision is the etcd revision of the policy's last change (for Lazy).
	Revision int64
	// Spec carries the API defaults (PropagationSpec.SetDefaults).
	Spec policyv1alpha1.PropagationSpec
	// Deleting is true when the policy has a deletionTimestamp; it then
	// neither claims nor keeps templates.
	Deleting bool
}

// priority is the policy's explicit priority.
func (p *Policy) priority() int32 { return p.Spec.ExplicitPriority() }

// lazy reports activationPreference Lazy.
func (p *Policy) lazy() bool { return p.Spec.ActivationPreference == policyv1alpha1.LazyActivation }

// Template is a resource template as stored.
type Template struct {
	Ref      store.ObjectRef
	Obj      *unstructured.Unstructured
	Revision int64
}

// ResourceVersion is the template revision as bindings record it.
func (t *Template) ResourceVersion() string { return strconv.FormatInt(t.Revision, 10) }

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
func policyRefOf(ref store.ObjectRef) PolicyRef {
	if ref.Kind == policyv1alpha1.KindClusterPropagationPolicy {
		return PolicyRef{Cluster: true, Name: ref.Name}
	}
	return PolicyRef{Namespace: ref.Namespace, Name: ref.Name}
}

// decodePolicy reads the policy stored in kv at ref. Validation is the API
// server's job; the detector only applies the defaults so that bindings
// carry the effective placement.
func decodePolicy(ref store.ObjectRef, kv store.KV) (*Policy, error) {
	var doc struct {
		Metadata metav1.ObjectMeta              `json:"metadata"`
		Spec     policyv1alpha1.PropagationSpec `json:"spec"`
	}
	if err := json.Unmarshal(kv.Value, &doc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", policyRefOf(ref), err)
	}
	p := &Policy{
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
func decodeTemplate(ref store.ObjectRef, kv store.KV) (*Template, error) {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(kv.Value); err != nil {
		return nil, fmt.Errorf("decode %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
	}
	return &Template{Ref: ref, Obj: obj, Revision: kv.Revision}, nil
}
