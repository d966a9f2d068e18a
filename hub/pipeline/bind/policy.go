package bind

import (
	"strconv"

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
