package render

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/api/codec"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/customizations"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// inputs are the renderer's copy of everything works derive from, keyed by
// work key (templates, bindings), policy name and cluster name. Only the
// goroutine of Run touches them.
type inputs struct {
	templates map[string]*unstructured.Unstructured
	bindings  map[string]*workv1alpha1.ResourceBinding
	cops      map[string]*policyv1alpha1.ClusterOverridePolicy     // by name
	ops       map[string]map[string]*policyv1alpha1.OverridePolicy // by namespace, name
	clusters  map[string]*clusterv1alpha1.Cluster                  // by name
	dirty     map[string]map[string]bool                           // work key → clusters to redo; nil: all
	dropped   []string                                             // clusters deleted since the last flush
	// broken holds the store keys of templates and bindings that last
	// failed to decode: their last good values (if any) stay, and their
	// works never lose a cluster because of it.
	broken map[string]bool
	// ro are the rollouts (rollout.go).
	ro rolloutInputs
	// loading skips the marking that scans other objects: after a list,
	// every work is marked anyway.
	loading bool
}

func newInputs() *inputs {
	return &inputs{
		templates: map[string]*unstructured.Unstructured{},
		bindings:  map[string]*workv1alpha1.ResourceBinding{},
		cops:      map[string]*policyv1alpha1.ClusterOverridePolicy{},
		ops:       map[string]map[string]*policyv1alpha1.OverridePolicy{},
		clusters:  map[string]*clusterv1alpha1.Cluster{},
		dirty:     map[string]map[string]bool{},
		broken:    map[string]bool{},
	}
}

// markAll marks key for every cluster.
func (in *inputs) markAll(key string) { in.dirty[key] = nil }

// markCluster marks key for one cluster, unless it is marked for all.
func (in *inputs) markCluster(key, cluster string) {
	set, ok := in.dirty[key]
	if ok && set == nil {
		return
	}
	if set == nil {
		set = map[string]bool{}
		in.dirty[key] = set
	}
	set[cluster] = true
}

// apply records one change of the view and marks the works it affects. A
// value that does not decode is never treated as absent: the last good one
// is kept and the error returned for the caller to log and count.
func (in *inputs) apply(c view.Change) error {
	if handled, err := in.applyRollout(c); handled {
		return err
	}
	key := c.Key
	switch {
	case strings.HasPrefix(key, store.ClustersPrefix):
		return in.applyCluster(strings.TrimPrefix(key, store.ClustersPrefix), c.Object)
	case strings.HasPrefix(key, store.BindingsPrefix):
		if ref, ok := store.ParseObjectKey(key); ok {
			return in.applyBinding(work.KeyOfRef(ref), c)
		}
	case strings.HasPrefix(key, store.ObjectsPrefix):
		ref, ok := store.ParseObjectKey(key)
		switch {
		case !ok:
		case isOverrideKey(ref):
			return in.applyOverride(ref, c.Object)
		case isQuotaKey(ref):
			return in.applyQuota(work.KeyOfRef(ref), c)
		case ref.Group != "" && codec.OwnGroup(ref.Group+"/v1alpha1"):
			// Tether's own objects (propagation policies, customizations...).
		default:
			return in.applyTemplate(work.KeyOfRef(ref), c)
		}
	}
	return nil
}

// markScope marks every work of the templates whose kind sc matches: the
// interpreter's customizations for that kind changed.
func (in *inputs) markScope(sc customizations.Scope) {
	if sc.Empty() {
		return
	}
	for key, t := range in.templates {
		if sc.Matches(t.GroupVersionKind()) {
			in.markAll(key)
		}
	}
}

// undecodable reports whether the template or the binding of work key
// last failed to decode.
func (in *inputs) undecodable(key string) bool {
	return in.broken[store.ObjectsPrefix+key] || in.broken[store.BindingsPrefix+key]
}

func isOverrideKey(ref store.ObjectRef) bool {
	if ref.Group != policyv1alpha1.GroupName && ref.Group != policyv1alpha1.KarmadaGroupName {
		return false
	}
	return ref.Kind == policyv1alpha1.KindOverridePolicy || ref.Kind == policyv1alpha1.KindClusterOverridePolicy
}

func (in *inputs) applyTemplate(key string, c view.Change) error {
	in.markAll(key)
	delete(in.broken, c.Key)
	if c.Object == nil {
		delete(in.templates, key)
		return nil
	}
	var err error
	obj, _ := c.Object.Value.(*unstructured.Unstructured)
	if c.Object.Err != nil {
		err = fmt.Errorf("decode template %s: %w", key, c.Object.Err)
	} else if got := work.KeyOf(obj); got != key {
		err = fmt.Errorf("template stored at %s identifies itself as %s", key, got)
	}
	if err != nil {
		in.broken[c.Key] = true
		return err
	}
	in.templates[key] = obj // shared with the view: read only
	return nil
}

// applyBinding keeps the binding and marks its works when its spec or
// identity changed; status-only writes (the aggregator's) change no work.
func (in *inputs) applyBinding(key string, c view.Change) error {
	old := in.bindings[key]
	if c.Object == nil {
		delete(in.bindings, key)
		delete(in.broken, c.Key)
		in.markAll(key)
		return nil
	}
	if c.Object.Err != nil {
		in.broken[c.Key] = true
		return fmt.Errorf("decode binding of %s: %w", key, c.Object.Err)
	}
	delete(in.broken, c.Key)
	b := withoutStatus(c.Object.Value.(*workv1alpha1.ResourceBinding))
	b.UID = work.PermanentID(b, c.Object.CreateRevision)
	in.bindings[key] = b
	if old == nil || old.UID != b.UID || old.Name != b.Name || old.Namespace != b.Namespace ||
		!equality.Semantic.DeepEqual(old.Spec, b.Spec) {
		in.markAll(key)
	}
	return nil
}

// withoutStatus is a shallow copy of the view's binding b without its
// status, which renders nothing (the aggregator rewrites it as agents
// report): the renderer sets the copy's UID, never the shared one's.
func withoutStatus(b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	return &workv1alpha1.ResourceBinding{TypeMeta: b.TypeMeta, ObjectMeta: b.ObjectMeta, Spec: b.Spec}
}

// applyOverride keeps the policy and marks the templates the old or the
// new version selects.
// One that does not decode keeps its last good value.
func (in *inputs) applyOverride(ref store.ObjectRef, o *view.Object) error {
	oldSel, hadOld := in.overrideSelectors(ref)
	var err error
	if o != nil {
		err = in.putOverride(ref, o)
	} else {
		in.deleteOverride(ref)
	}
	if err != nil {
		return err
	}
	newSel, hasNew := in.overrideSelectors(ref)
	if in.loading {
		return err
	}
	for key, t := range in.templates {
		if ref.Kind == policyv1alpha1.KindOverridePolicy && t.GetNamespace() != ref.Namespace {
			continue
		}
		if (hadOld && work.Selects(t, oldSel)) || (hasNew && work.Selects(t, newSel)) {
			in.markAll(key)
		}
	}
	return err
}

// putOverride keeps the typed policy of o, decoded from the view's
// unstructured value as the stored bytes would be.
func (in *inputs) putOverride(ref store.ObjectRef, o *view.Object) error {
	if o.Err != nil {
		return fmt.Errorf("decode %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, o.Err)
	}
	value, err := o.Value.(*unstructured.Unstructured).MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
	}
	if ref.Kind == policyv1alpha1.KindClusterOverridePolicy {
		p := &policyv1alpha1.ClusterOverridePolicy{}
		if err := json.Unmarshal(value, p); err != nil {
			return fmt.Errorf("decode ClusterOverridePolicy %s: %w", ref.Name, err)
		}
		p.Name = ref.Name
		in.cops[ref.Name] = p
		return nil
	}
	p := &policyv1alpha1.OverridePolicy{}
	if err := json.Unmarshal(value, p); err != nil {
		return fmt.Errorf("decode OverridePolicy %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	p.Namespace, p.Name = ref.Namespace, ref.Name
	p.SetDefaults()
	if in.ops[ref.Namespace] == nil {
		in.ops[ref.Namespace] = map[string]*policyv1alpha1.OverridePolicy{}
	}
	in.ops[ref.Namespace][ref.Name] = p
	return nil
}

func (in *inputs) deleteOverride(ref store.ObjectRef) {
	if ref.Kind == policyv1alpha1.KindClusterOverridePolicy {
		delete(in.cops, ref.Name)
		return
	}
	delete(in.ops[ref.Namespace], ref.Name)
	if len(in.ops[ref.Namespace]) == 0 {
		delete(in.ops, ref.Namespace)
	}
}

func (in *inputs) overrideSelectors(ref store.ObjectRef) ([]policyv1alpha1.ResourceSelector, bool) {
	if ref.Kind == policyv1alpha1.KindClusterOverridePolicy {
		p, ok := in.cops[ref.Name]
		if !ok {
			return nil, false
		}
		return p.Spec.ResourceSelectors, true
	}
	p, ok := in.ops[ref.Namespace][ref.Name]
	if !ok {
		return nil, false
	}
	return p.Spec.ResourceSelectors, true
}

// candidates returns the override policies that apply to obj
// (Candidates).
func (in *inputs) candidates(obj *unstructured.Unstructured) ([]policyv1alpha1.ClusterOverridePolicy, []policyv1alpha1.OverridePolicy) {
	cops := make([]*policyv1alpha1.ClusterOverridePolicy, 0, len(in.cops))
	for _, p := range in.cops {
		cops = append(cops, p)
	}
	ns := in.ops[obj.GetNamespace()]
	ops := make([]*policyv1alpha1.OverridePolicy, 0, len(ns))
	for _, p := range ns {
		ops = append(ops, p)
	}
	return work.Candidates(obj, cops, ops)
}
