package detector

import (
	"slices"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// storedBinding is a binding as last read from or written to the store.
type storedBinding struct {
	Revision int64
	B        *workv1alpha1.ResourceBinding
}

// parentState is what a parent template's dependencies resolved to when its
// dependencies were last marked for reconciling.
type parentState struct {
	deps []store.ObjectRef
	// bindingRev is the parent binding's revision at that time: a new one
	// (say, new clusters) changes the dependencies' requiredBy snapshots.
	bindingRev int64
	// selector is true when a reference selects by labels, so that any
	// template change in the namespace may change deps.
	selector bool
}

// index is the detector's view of the store. It belongs to the goroutine
// running Run and needs no lock.
type index struct {
	templates map[store.ObjectRef]*bind.Template
	policies  map[bind.PolicyRef]*bind.Policy
	// overrides holds the existing override policies as {namespace, name};
	// a ClusterOverridePolicy has namespace "".
	overrides map[[2]string]bool
	bindings  map[store.ObjectRef]storedBinding
	parents   map[store.ObjectRef]parentState
	// requiredBy is the reverse of parents: dependency → parents.
	requiredBy map[store.ObjectRef]map[store.ObjectRef]bool
	// overrideSelectors are the last good resource selectors of each
	// override policy, by {namespace, name}.
	overrideSelectors map[[2]string][]policyv1alpha1.ResourceSelector
	// broken are the stored objects that last failed to decode.
	broken broken
}

func newIndex() *index {
	return &index{
		templates:  map[store.ObjectRef]*bind.Template{},
		policies:   map[bind.PolicyRef]*bind.Policy{},
		overrides:  map[[2]string]bool{},
		bindings:   map[store.ObjectRef]storedBinding{},
		parents:    map[store.ObjectRef]parentState{},
		requiredBy: map[store.ObjectRef]map[store.ObjectRef]bool{},

		overrideSelectors: map[[2]string][]policyv1alpha1.ResourceSelector{},
		broken:            newBroken(),
	}
}

// policiesFor returns the PropagationPolicies of namespace ns (none for
// "") and all ClusterPropagationPolicies.
func (x *index) policiesFor(ns string) (pps, cpps []*bind.Policy) {
	for _, p := range x.policies {
		switch {
		case p.Ref.Cluster:
			cpps = append(cpps, p)
		case ns != "" && p.Ref.Namespace == ns:
			pps = append(pps, p)
		}
	}
	return pps, cpps
}

func (x *index) overrideExists(namespace, name string) bool {
	return x.overrides[[2]string{namespace, name}]
}

// templatesOf lists the templates of one group, kind and namespace.
func (x *index) templatesOf(group, kind, namespace string) []*bind.Template {
	var out []*bind.Template
	for _, t := range x.templates {
		if t.Ref.Group == group && t.Ref.Kind == kind && t.Ref.Namespace == namespace {
			out = append(out, t)
		}
	}
	return out
}

// parentBindings are the stored bindings of the parents that need ref and
// still propagate their dependencies.
func (x *index) parentBindings(ref store.ObjectRef) []*workv1alpha1.ResourceBinding {
	var out []*workv1alpha1.ResourceBinding
	for p := range x.requiredBy[ref] {
		sb, ok := x.bindings[p]
		if ok && propagatesDeps(x.templates[p], sb.B) {
			out = append(out, sb.B)
		}
	}
	return out
}

// setParent records parent's resolved dependencies and reports the
// dependencies whose requiredBy may have changed (old and new), or none
// when neither the set nor the parent binding changed.
func (x *index) setParent(parent store.ObjectRef, st parentState) []store.ObjectRef {
	old, had := x.parents[parent]
	if had && old.bindingRev == st.bindingRev && slices.Equal(old.deps, st.deps) {
		x.parents[parent] = st
		return nil
	}
	for _, d := range old.deps {
		delete(x.requiredBy[d], parent)
		if len(x.requiredBy[d]) == 0 {
			delete(x.requiredBy, d)
		}
	}
	for _, d := range st.deps {
		if x.requiredBy[d] == nil {
			x.requiredBy[d] = map[store.ObjectRef]bool{}
		}
		x.requiredBy[d][parent] = true
	}
	if len(st.deps) == 0 && !st.selector {
		delete(x.parents, parent)
	} else {
		x.parents[parent] = st
	}
	return append(slices.Clone(old.deps), st.deps...)
}

// selectorParents are the parents in namespace ns whose dependencies are
// selected by labels.
func (x *index) selectorParents(ns string) []store.ObjectRef {
	var out []store.ObjectRef
	for p, st := range x.parents {
		if st.selector && p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out
}

// claimedBy lists the templates whose bindings are claimed by ref.
func (x *index) claimedBy(ref bind.PolicyRef) []store.ObjectRef {
	var out []store.ObjectRef
	for k, sb := range x.bindings {
		if c := bind.ClaimOf(sb.B); c != nil && c.Policy == ref {
			out = append(out, k)
		}
	}
	return out
}
