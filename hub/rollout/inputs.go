package rollout

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/api/codec"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// inputs are the loop's copy of what rollouts derive from. Values are the
// view's, shared: read only.
type inputs struct {
	policies  map[string]map[string]*policyv1alpha1.RolloutPolicy // namespace → name
	templates map[string]*unstructured.Unstructured               // work key
	bindings  map[string]bindingEntry                             // work key
	clusters  map[string]*clusterv1alpha1.Cluster                 // name
	records   map[string]recordEntry                              // work key
	// brokenNS: namespaces with a RolloutPolicy that does not decode.
	brokenNS map[string]map[string]bool
	// brokenTemplates: work keys whose template does not decode (its
	// record is kept: unknown means keep).
	brokenTemplates map[string]bool
}

type bindingEntry struct {
	key string // the binding's store key
	b   *workv1alpha1.ResourceBinding
}

// recordEntry is a stored rollout record; rec is nil when it does not
// decode (broken) and rev is its mod revision.
type recordEntry struct {
	rec *rollout.Record
	rev int64
}

func newInputs() *inputs {
	return &inputs{policies: map[string]map[string]*policyv1alpha1.RolloutPolicy{},
		templates: map[string]*unstructured.Unstructured{}, bindings: map[string]bindingEntry{},
		clusters: map[string]*clusterv1alpha1.Cluster{}, records: map[string]recordEntry{},
		brokenNS: map[string]map[string]bool{}, brokenTemplates: map[string]bool{}}
}

// apply records one change of the view.
func (in *inputs) apply(c view.Change) error {
	if c.Object != nil && c.Object.Err != nil {
		in.markBroken(c.Key)
		return c.Object.Err
	}
	switch {
	case strings.HasPrefix(c.Key, store.RolloutsPrefix):
		key := strings.TrimPrefix(c.Key, store.RolloutsPrefix)
		if c.Object == nil {
			delete(in.records, key)
			return nil
		}
		in.records[key] = recordEntry{rec: c.Object.Value.(*rollout.Record), rev: c.Object.Revision}
	case strings.HasPrefix(c.Key, store.ClustersPrefix):
		name := strings.TrimPrefix(c.Key, store.ClustersPrefix)
		if c.Object == nil {
			delete(in.clusters, name)
			return nil
		}
		in.clusters[name] = c.Object.Value.(*clusterv1alpha1.Cluster)
	case strings.HasPrefix(c.Key, store.BindingsPrefix):
		ref, ok := store.ParseObjectKey(c.Key)
		if !ok {
			return nil
		}
		if c.Object == nil {
			delete(in.bindings, work.KeyOfRef(ref))
			return nil
		}
		in.bindings[work.KeyOfRef(ref)] = bindingEntry{key: c.Key, b: c.Object.Value.(*workv1alpha1.ResourceBinding)}
	case strings.HasPrefix(c.Key, store.ObjectsPrefix):
		return in.applyObject(c)
	}
	return nil
}

// applyObject records a template or a RolloutPolicy.
func (in *inputs) applyObject(c view.Change) error {
	ref, ok := store.ParseObjectKey(c.Key)
	if !ok {
		return nil
	}
	if ref.Group == policyv1alpha1.GroupName && ref.Kind == rollout.KindRolloutPolicy {
		delete(in.brokenNS[ref.Namespace], ref.Name)
		if c.Object == nil {
			delete(in.policies[ref.Namespace], ref.Name)
			return nil
		}
		p, err := rollout.DecodePolicy(c.Object.Value.(*unstructured.Unstructured))
		if err != nil {
			in.markBroken(c.Key)
			return err
		}
		if in.policies[ref.Namespace] == nil {
			in.policies[ref.Namespace] = map[string]*policyv1alpha1.RolloutPolicy{}
		}
		in.policies[ref.Namespace][ref.Name] = p
		return nil
	}
	if ref.Group != "" && codec.OwnGroup(ref.Group+"/v1alpha1") {
		return nil // Tether's own objects are not templates (as hub/render reads them)
	}
	key := work.KeyOfRef(ref)
	delete(in.brokenTemplates, key)
	if c.Object == nil {
		delete(in.templates, key)
		return nil
	}
	in.templates[key] = c.Object.Value.(*unstructured.Unstructured)
	return nil
}

// markBroken records a key that does not decode: a rollout record keeps
// its key held (no entry written over it), a RolloutPolicy holds its
// namespace; other objects keep their last good value.
func (in *inputs) markBroken(key string) {
	if k, ok := strings.CutPrefix(key, store.RolloutsPrefix); ok {
		in.records[k] = recordEntry{}
		return
	}
	ref, ok := store.ParseObjectKey(key)
	switch {
	case !ok || !strings.HasPrefix(key, store.ObjectsPrefix):
	case ref.Group == policyv1alpha1.GroupName && ref.Kind == rollout.KindRolloutPolicy:
		if in.brokenNS[ref.Namespace] == nil {
			in.brokenNS[ref.Namespace] = map[string]bool{}
		}
		in.brokenNS[ref.Namespace][ref.Name] = true
	default:
		in.brokenTemplates[work.KeyOfRef(ref)] = true
	}
}

// policyOf returns the RolloutPolicy pacing template t (rollout.Select).
func (in *inputs) policyOf(t *unstructured.Unstructured) *policyv1alpha1.RolloutPolicy {
	ns := in.policies[t.GetNamespace()]
	ps := make([]*policyv1alpha1.RolloutPolicy, 0, len(ns))
	for _, p := range ns {
		ps = append(ps, p)
	}
	return rollout.Select(t, ps)
}

// pacedKeys returns the work keys of the templates of namespaces that
// have RolloutPolicies and that have a binding, sorted.
func (in *inputs) pacedKeys() []string {
	var out []string
	for key, t := range in.templates {
		if len(in.policies[t.GetNamespace()]) == 0 {
			continue
		}
		if _, ok := in.bindings[key]; ok {
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}
