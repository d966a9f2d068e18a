package clientapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/quota"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/overrides"
)

// checkQuotas rejects, before anything is stored, every template of items
// whose placement would take its namespace over one of the namespace's
// FederatedResourceQuotas (the stored ones with the request's laid over
// them), every PropagationPolicy whose placement of the namespace's
// templates would, and every ClusterPropagationPolicy whose placement of
// the templates of some namespace would (checkClusterPolicyQuota): the
// template is placed as the loops would place it
// (pipelineInput) and its usage, against the namespace's stored bindings,
// is checked with quota.Check. The rejection says which quota and
// resource, what is used, requested and allowed. Objects in namespaces
// without a quota cost one store read per namespace.
func (b *backend) checkQuotas(ctx context.Context, items []*item, plans map[*item]*plan) error {
	byNS := map[string]*nsQuota{}
	for _, it := range items {
		if it.rejected() || plans[it] == nil || plans[it].outcome == hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED {
			continue
		}
		var err error
		switch it.typed.(type) {
		case *policyv1alpha1.ClusterPropagationPolicy:
			err = b.checkClusterPolicyQuota(ctx, it, items, byNS)
		case *policyv1alpha1.PropagationPolicy, nil:
			err = b.checkNamespacedQuota(ctx, it, plans[it], items, byNS)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkNamespacedQuota checks a template or a PropagationPolicy against
// the quotas of its namespace.
func (b *backend) checkNamespacedQuota(ctx context.Context, it *item, p *plan, items []*item, byNS map[string]*nsQuota) error {
	if it.key.Namespace == "" {
		return nil
	}
	ns, err := b.namespaceQuota(ctx, byNS, it.key.Namespace, items)
	if err != nil || ns == nil {
		return err
	}
	if _, policy := it.typed.(*policyv1alpha1.PropagationPolicy); policy {
		return b.checkPolicyQuota(ctx, it, items, ns)
	}
	return b.checkTemplateQuota(ctx, it, p, items, ns)
}

// nsQuota is what checkQuotas knows of one namespace: its quotas, and its
// usage: the stored bindings' plus what the request's objects accepted so
// far add, so that two templates of one request cannot each take the
// room that is left.
type nsQuota struct {
	quotas []*policyv1alpha1.FederatedResourceQuota
	used   corev1.ResourceList
}

// admit checks a change of usage from old to next against every quota of
// ns and, when it fits, counts it.
func (ns *nsQuota) admit(old, next corev1.ResourceList) error {
	for _, q := range ns.quotas {
		if err := quota.Check(q, ns.used, old, next); err != nil {
			return err
		}
	}
	used := corev1.ResourceList{}
	quota.Add(used, ns.used)
	quota.Add(used, next)
	for k, v := range old {
		u := used[k]
		u.Sub(v)
		used[k] = u
	}
	ns.used = used
	return nil
}

// namespaceQuota is the nsQuota of namespace name, read once per request
// (nil when it has no quota).
func (b *backend) namespaceQuota(ctx context.Context, byNS map[string]*nsQuota, name string, items []*item) (*nsQuota, error) {
	if ns, ok := byNS[name]; ok {
		return ns, nil
	}
	qs, err := b.quotasOf(ctx, name, items)
	if err != nil || len(qs) == 0 {
		byNS[name] = nil
		return nil, err
	}
	used, err := b.namespaceUsage(ctx, name)
	if err != nil {
		return nil, err
	}
	byNS[name] = &nsQuota{quotas: qs, used: used}
	return byNS[name], nil
}

// quotasMayApply reports whether a FederatedResourceQuota may bear on
// items: one of them is a quota, or a template or PropagationPolicy that
// changes, of a namespace that has one, or a ClusterPropagationPolicy that
// changes while some namespace has one, by a local read (store.ListLocal)
// of every stored quota. Apply's
// fast path leaves such requests to its quorum path (checkQuotas); a quota
// created on another replica an instant before may be missed, as any
// write racing with the template would be.
func (b *backend) quotasMayApply(ctx context.Context, items []*item, plans map[*item]*plan) (bool, error) {
	namespaces, anyNamespace := map[string]bool{}, false
	for _, it := range items {
		if _, ok := it.typed.(*policyv1alpha1.FederatedResourceQuota); ok {
			return true, nil
		}
		p := plans[it]
		if _, cpp := it.typed.(*policyv1alpha1.ClusterPropagationPolicy); cpp && p != nil && p.outcome != hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED {
			anyNamespace = true
		}
		_, policy := it.typed.(*policyv1alpha1.PropagationPolicy)
		if (it.typed == nil || policy) && it.key.Namespace != "" && p != nil && p.outcome != hubv1.ApplyOutcome_APPLY_OUTCOME_UNCHANGED {
			namespaces[it.key.Namespace] = true
		}
	}
	if len(namespaces) == 0 && !anyNamespace {
		return false, nil
	}
	kvs, err := b.st.ListLocal(ctx, store.KindPrefix(store.ObjectsPrefix, policyv1alpha1.GroupName, policyv1alpha1.KindFederatedResourceQuota, ""))
	if err != nil {
		return false, err
	}
	for _, kv := range kvs {
		if key, ok := store.ParseObjectKey(kv.Key); ok && (anyNamespace || namespaces[key.Namespace]) {
			return true, nil
		}
	}
	return false, nil
}

// checkTemplateQuota places the template of it and rejects it when its
// usage does not fit ns.
func (b *backend) checkTemplateQuota(ctx context.Context, it *item, p *plan, items []*item, ns *nsQuota) error {
	e, err := b.environment(ctx, given(it, items))
	if err != nil {
		return err
	}
	t, err := storedTemplate(it, p)
	if err != nil {
		return err
	}
	res := pipelineTemplate(ctx, b, t, e)
	next := corev1.ResourceList{}
	if res.Bound && res.Binding != nil {
		next = quota.Usage(res.Binding)
	}
	if err := ns.admit(quota.Usage(e.binding), next); err != nil {
		it.reject(err.Error(), &hubv1.FieldError{Field: "spec", Type: "Forbidden", Detail: err.Error()})
	}
	return nil
}

// checkPolicyQuota rejects the PropagationPolicy of it when placing the
// stored templates of its namespace that it selects, with it and the
// request's other objects applied, would take their usage over ns.
func (b *backend) checkPolicyQuota(ctx context.Context, it *item, items []*item, ns *nsQuota) error {
	pp := it.typed.(*policyv1alpha1.PropagationPolicy)
	templates, err := b.selectedTemplates(ctx, pp.Namespace, pp.Spec.ResourceSelectors)
	if err != nil {
		return err
	}
	old, next, err := b.quotaChange(ctx, it, items, templates)
	if err != nil {
		return err
	}
	if err := ns.admit(old, next); err != nil {
		msg := fmt.Sprintf("placing the %d templates it selects: %v", len(templates), selected(err))
		it.reject(msg, &hubv1.FieldError{Field: "spec.placement", Type: "Forbidden", Detail: msg})
	}
	return nil
}

// checkClusterPolicyQuota rejects the ClusterPropagationPolicy of it when
// placing the stored templates it selects, with it and the request's other
// objects applied, would take the templates of one namespace over that
// namespace's quotas. Only namespaces with a quota are read.
func (b *backend) checkClusterPolicyQuota(ctx context.Context, it *item, items []*item, byNS map[string]*nsQuota) error {
	cpp := it.typed.(*policyv1alpha1.ClusterPropagationPolicy)
	names, err := b.quotaNamespaces(ctx, items)
	if err != nil {
		return err
	}
	for _, name := range names {
		ns, err := b.namespaceQuota(ctx, byNS, name, items)
		if err != nil {
			return err
		}
		if ns == nil {
			continue
		}
		templates, err := b.selectedTemplates(ctx, name, cpp.Spec.ResourceSelectors)
		if err != nil {
			return err
		}
		if len(templates) == 0 {
			continue
		}
		old, next, err := b.quotaChange(ctx, it, items, templates)
		if err != nil {
			return err
		}
		if err := ns.admit(old, next); err != nil {
			msg := fmt.Sprintf("placing the %d templates of namespace %s it selects: %v", len(templates), name, selected(err))
			it.reject(msg, &hubv1.FieldError{Field: "spec.placement", Type: "Forbidden", Detail: msg})
			return nil
		}
	}
	return nil
}

// quotaNamespaces are the namespaces with a FederatedResourceQuota, stored
// or among items (not rejected), sorted.
func (b *backend) quotaNamespaces(ctx context.Context, items []*item) ([]string, error) {
	kvs, _, err := b.st.List(ctx, store.KindPrefix(store.ObjectsPrefix, policyv1alpha1.GroupName, policyv1alpha1.KindFederatedResourceQuota, ""))
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, kv := range kvs {
		if key, ok := store.ParseObjectKey(kv.Key); ok {
			set[key.Namespace] = true
		}
	}
	for _, it := range items {
		if _, ok := it.typed.(*policyv1alpha1.FederatedResourceQuota); ok && !it.rejected() {
			set[it.key.Namespace] = true
		}
	}
	return slices.Sorted(maps.Keys(set)), nil
}

// quotaChange is the usage of templates before (their stored
// bindings') and after placing them with it and the request's other
// objects laid over the store.
func (b *backend) quotaChange(ctx context.Context, it *item, items []*item, templates []*bind.Template) (old, next corev1.ResourceList, err error) {
	old, next = corev1.ResourceList{}, corev1.ResourceList{}
	for _, t := range templates {
		e, err := b.environment(ctx, append([]*item{{key: t.Ref}}, given(it, items)...))
		if err != nil {
			return nil, nil, err
		}
		quota.Add(old, quota.Usage(e.binding))
		if res := pipelineTemplate(ctx, b, t, e); res.Bound && res.Binding != nil {
			quota.Add(next, quota.Usage(res.Binding))
		}
	}
	return old, next, nil
}

// selected is a quota refusal of a policy's templates, said of them.
func selected(err error) error {
	var ee *quota.ExceededError
	if errors.As(err, &ee) {
		ee.Subject = "the templates it selects"
	}
	return err
}

// given is it followed by the other items of the request that are not
// rejected: what a simulation lays over the store.
func given(it *item, items []*item) []*item {
	out := []*item{it}
	for _, o := range items {
		if o != it && !o.rejected() {
			out = append(out, o)
		}
	}
	return out
}

// selectedTemplates reads the stored templates of namespace ns that
// selectors select (overrides.MatchesResource).
func (b *backend) selectedTemplates(ctx context.Context, ns string, selectors []policyv1alpha1.ResourceSelector) ([]*bind.Template, error) {
	seen := map[string]bool{}
	var out []*bind.Template
	for _, rs := range selectors {
		gv, err := schema.ParseGroupVersion(rs.APIVersion)
		if err != nil {
			continue
		}
		prefix := store.KindPrefix(store.ObjectsPrefix, gv.Group, rs.Kind, ns)
		if seen[prefix] {
			continue
		}
		seen[prefix] = true
		kvs, _, err := b.st.List(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, kv := range kvs {
			u := &unstructured.Unstructured{}
			key, ok := store.ParseObjectKey(kv.Key)
			if !ok || seen[kv.Key] || u.UnmarshalJSON(kv.Value) != nil || !overrides.MatchesResource(u, selectors...) {
				continue
			}
			seen[kv.Key] = true
			out = append(out, &bind.Template{Ref: key, Obj: u, Revision: kv.Revision})
		}
	}
	return out, nil
}

// quotasOf reads the FederatedResourceQuotas of namespace ns, with those of
// items (not rejected) in place of the stored ones of the same name.
func (b *backend) quotasOf(ctx context.Context, ns string, items []*item) ([]*policyv1alpha1.FederatedResourceQuota, error) {
	byName := map[string]*policyv1alpha1.FederatedResourceQuota{}
	kvs, _, err := b.st.List(ctx, store.KindPrefix(store.ObjectsPrefix, policyv1alpha1.GroupName, policyv1alpha1.KindFederatedResourceQuota, ns))
	if err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		q := &policyv1alpha1.FederatedResourceQuota{}
		if err := json.Unmarshal(kv.Value, q); err != nil {
			return nil, fmt.Errorf("decode %s: %w", kv.Key, err)
		}
		key, _ := store.ParseObjectKey(kv.Key)
		q.Namespace, q.Name = key.Namespace, key.Name
		byName[q.Name] = q
	}
	for _, it := range items {
		if q, ok := it.typed.(*policyv1alpha1.FederatedResourceQuota); ok && !it.rejected() && q.Namespace == ns {
			byName[q.Name] = q
		}
	}
	out := make([]*policyv1alpha1.FederatedResourceQuota, 0, len(byName))
	for _, q := range byName {
		out = append(out, q)
	}
	return out, nil
}

// namespaceUsage is what the stored bindings of namespace ns use
// (quota.Usage of each).
func (b *backend) namespaceUsage(ctx context.Context, ns string) (corev1.ResourceList, error) {
	rbs, err := b.namespaceBindings(ctx, ns)
	if err != nil {
		return nil, err
	}
	used := corev1.ResourceList{}
	for _, rb := range rbs {
		quota.Add(used, quota.Usage(rb))
	}
	return used, nil
}

// namespaceBindings reads the stored bindings of namespace ns.
func (b *backend) namespaceBindings(ctx context.Context, ns string) ([]*workv1alpha1.ResourceBinding, error) {
	kvs, _, err := b.st.List(ctx, store.BindingsPrefix)
	if err != nil {
		return nil, err
	}
	var out []*workv1alpha1.ResourceBinding
	for _, kv := range kvs {
		key, ok := store.ParseObjectKey(kv.Key)
		if !ok || key.Namespace != ns {
			continue
		}
		rb := &workv1alpha1.ResourceBinding{}
		if err := json.Unmarshal(kv.Value, rb); err != nil {
			return nil, fmt.Errorf("decode binding %s: %w", kv.Key, err)
		}
		out = append(out, rb)
	}
	return out, nil
}

// withQuotaStatus sets the status of a FederatedResourceQuota being read
// (Get, List, Watch): quota.Status of the namespace's stored bindings,
// computed on read (the stored quota never holds one).
func (b *backend) withQuotaStatus(ctx context.Context, key store.ObjectRef, kv store.KV) (store.KV, error) {
	if key.Group != policyv1alpha1.GroupName || key.Kind != policyv1alpha1.KindFederatedResourceQuota {
		return kv, nil
	}
	q := &policyv1alpha1.FederatedResourceQuota{}
	if len(kv.Value) == 0 || json.Unmarshal(kv.Value, q) != nil {
		return kv, nil // a deletion, or a value the read returns as stored
	}
	rbs, err := b.namespaceBindings(ctx, key.Namespace)
	if err != nil {
		return kv, err
	}
	q.Status = quota.Status(q, rbs)
	if kv.Value, err = json.Marshal(q); err != nil {
		return kv, err
	}
	return kv, nil
}
