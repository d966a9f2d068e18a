package render

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// A FederatedResourceQuota's staticAssignments are works like any other:
// the quota is the key's template and work.QuotaBinding its binding (the
// clusters it names), so that the plan's rules govern them as they govern
// every work: a cluster leaving the list, or the quota deleted, removes
// the member's ResourceQuota (DELETE); a quota that does not decode, a
// failed render, a restarted hub or a hub that is not authoritative keeps
// it. Only renderWork (what a cluster gets) and perCluster (one render
// per cluster: each has its own hard) tell quota keys apart.

// isQuotaKey reports whether ref is a stored FederatedResourceQuota.
func isQuotaKey(ref store.ObjectRef) bool {
	return isQuotaKind(ref.Group, ref.Kind)
}

// isQuotaKind reports whether group and kind are a FederatedResourceQuota's,
// in Tether's group or the Karmada group it aliases.
func isQuotaKind(group, kind string) bool {
	return (group == policyv1alpha1.GroupName || group == policyv1alpha1.KarmadaGroupName) &&
		kind == policyv1alpha1.KindFederatedResourceQuota
}

// isQuota reports whether the template t is a FederatedResourceQuota.
func isQuota(t *unstructured.Unstructured) bool {
	gvk := t.GroupVersionKind()
	return isQuotaKind(gvk.Group, gvk.Kind)
}

// applyQuota keeps a stored FederatedResourceQuota as the template of
// key and its work.QuotaBinding as the binding, and marks key. One that
// does not decode keeps its last good value (the works stay as they are).
func (in *inputs) applyQuota(key string, c view.Change) error {
	in.markAll(key)
	if c.Object == nil {
		delete(in.broken, c.Key)
		delete(in.templates, key)
		delete(in.bindings, key)
		return nil
	}
	u, q, err := decodeQuota(c.Object)
	if err == nil && work.KeyOf(u) != key {
		err = fmt.Errorf("stored at %s, identifies itself as %s", key, work.KeyOf(u))
	}
	if err != nil {
		in.broken[c.Key] = true
		return fmt.Errorf("decode FederatedResourceQuota %s: %w", key, err)
	}
	delete(in.broken, c.Key)
	b := work.QuotaBinding(q, q.UID)
	b.UID = work.PermanentID(b, c.Object.CreateRevision)
	in.templates[key], in.bindings[key] = u, b // u is shared with the view: read only
	return nil
}

// decodeQuota is a view object and its typed quota.
func decodeQuota(o *view.Object) (*unstructured.Unstructured, *policyv1alpha1.FederatedResourceQuota, error) {
	if o.Err != nil {
		return nil, nil, o.Err
	}
	u, ok := o.Value.(*unstructured.Unstructured)
	if !ok {
		return nil, nil, fmt.Errorf("value is %T", o.Value)
	}
	q, err := quotaOf(u)
	return u, q, err
}

// quotaOf decodes the FederatedResourceQuota t as its stored bytes
// would be.
func quotaOf(t *unstructured.Unstructured) (*policyv1alpha1.FederatedResourceQuota, error) {
	raw, err := t.MarshalJSON()
	if err != nil {
		return nil, err
	}
	q := &policyv1alpha1.FederatedResourceQuota{}
	if err := json.Unmarshal(raw, q); err != nil {
		return nil, err
	}
	return q, nil
}

// renderWork is one job's work: a static assignment's ResourceQuota for a
// quota (work.RenderQuota), else the template's render (work.Render).
func (r *Renderer) renderWork(ctx context.Context, in work.Input) (*work.Work, error) {
	if !isQuota(in.Template) {
		return work.Render(ctx, in, r.interp)
	}
	key := work.KeyOf(in.Template)
	q, err := quotaOf(in.Template)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", key, err)
	}
	return work.RenderQuota(key, q, in.Binding, in.Cluster.Name)
}

// perCluster is what a cluster adds to its render signature for the
// template t: its name for a quota, whose assignments differ per cluster
// in what no override signature sees; nothing otherwise.
func perCluster(t *unstructured.Unstructured, cluster string) string {
	if isQuota(t) {
		return "|" + cluster
	}
	return ""
}
