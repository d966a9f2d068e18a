package detector

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// propagatesDeps reports whether the binding b of template t makes t a
// parent whose dependencies get attached bindings: a binding of a
// namespaced template with propagateDeps (Karmada's dependencies
// distributor handles ResourceBindings only), claimed or released. A
// binding its policy released keeps its placement and so its
// dependencies: unbinding never takes a ConfigMap from under a workload
// that stays.
func propagatesDeps(t *bind.Template, b *workv1alpha1.ResourceBinding) bool {
	return t != nil && b != nil && t.Ref.Namespace != "" && b.Spec.PropagateDeps
}

// dependencies asks the interpreter what t depends on; none when the kind
// has no InterpretDependency hook.
func dependencies(ctx context.Context, t *bind.Template, interp bind.Interpreter) ([]configv1alpha1.DependentObjectReference, error) {
	if !interp.HookEnabled(t.Obj.GroupVersionKind(), configv1alpha1.InterpreterOperationInterpretDependency) {
		return nil, nil
	}
	deps, err := interp.GetDependencies(ctx, t.Obj.DeepCopy())
	if err != nil {
		return nil, fmt.Errorf("interpret dependencies of %s %s/%s: %w", t.Ref.Kind, t.Ref.Namespace, t.Ref.Name, err)
	}
	return deps, nil
}

// Resolve turns dependency references of parent into the templates they
// name: by name (whether or not the template exists yet), or by label
// selector over the templates of that kind and namespace that list returns.
// A reference without a namespace is in the parent's namespace; the parent
// itself is never its own dependency. The result is sorted and unique.
func Resolve(parent store.ObjectRef, deps []configv1alpha1.DependentObjectReference,
	list func(group, kind, namespace string) []*bind.Template) []store.ObjectRef {
	seen := map[store.ObjectRef]bool{}
	for _, d := range deps {
		gv, err := schema.ParseGroupVersion(d.APIVersion)
		if err != nil {
			continue
		}
		ns := d.Namespace
		if ns == "" {
			ns = parent.Namespace
		}
		if d.Name != "" {
			seen[store.ObjectRef{Group: gv.Group, Kind: d.Kind, Namespace: ns, Name: d.Name}] = true
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(d.LabelSelector)
		if err != nil {
			continue
		}
		for _, t := range list(gv.Group, d.Kind, ns) {
			if sel.Matches(labels.Set(t.Obj.GetLabels())) {
				seen[t.Ref] = true
			}
		}
	}
	delete(seen, parent)
	out := make([]store.ObjectRef, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	slices.SortFunc(out, compareRefs)
	return out
}

// hasSelector reports whether any reference selects by labels, which makes
// the resolved set depend on other templates' labels.
func hasSelector(deps []configv1alpha1.DependentObjectReference) bool {
	for _, d := range deps {
		if d.Name == "" && d.LabelSelector != nil {
			return true
		}
	}
	return false
}

// RequiredBy is the requiredBy list of a dependency from its parents'
// bindings: each parent binding's namespace, name and clusters, sorted by
// namespace and name. A parent's clusters are its targets and then the
// clusters it is gracefully leaving (its eviction tasks): a dependency stays
// wherever a copy of its parent still runs, so a failover never takes a
// ConfigMap from under a Deployment that is kept until its replacement is
// healthy. (Karmada snapshots spec.clusters only.)
func RequiredBy(parents []*workv1alpha1.ResourceBinding) []workv1alpha1.BindingSnapshot {
	if len(parents) == 0 {
		return nil
	}
	out := make([]workv1alpha1.BindingSnapshot, 0, len(parents))
	for _, p := range parents {
		out = append(out, workv1alpha1.BindingSnapshot{
			Namespace: p.Namespace,
			Name:      p.Name,
			Clusters:  parentClusters(p),
		})
	}
	slices.SortFunc(out, func(a, b workv1alpha1.BindingSnapshot) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// parentClusters are p's targets, then the clusters its eviction tasks are
// leaving, each once.
func parentClusters(p *workv1alpha1.ResourceBinding) []workv1alpha1.TargetCluster {
	out := slices.Clone(p.Spec.Clusters)
	for _, t := range p.Spec.GracefulEvictionTasks {
		if !slices.ContainsFunc(out, func(c workv1alpha1.TargetCluster) bool { return c.Name == t.FromCluster }) {
			out = append(out, workv1alpha1.TargetCluster{Name: t.FromCluster})
		}
	}
	return out
}

// AttachedSpec is the detector's part of an attached binding (a dependency
// no policy claims): the template reference, and the conflict resolution
// and preservation of the first parent, as Karmada's buildAttachedBinding
// copies them from the binding that needs it.
func AttachedSpec(t *bind.Template, parents []*workv1alpha1.ResourceBinding) workv1alpha1.ResourceBindingSpec {
	spec := workv1alpha1.ResourceBindingSpec{Resource: bind.Reference(t)}
	if len(parents) > 0 {
		first := slices.MinFunc(parents, func(a, b *workv1alpha1.ResourceBinding) int {
			return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
		})
		spec.ConflictResolution = first.Spec.ConflictResolution
		spec.PreserveResourcesOnDeletion = first.Spec.PreserveResourcesOnDeletion
	}
	return spec
}

func compareRefs(a, b store.ObjectRef) int {
	for _, c := range [...]int{
		strings.Compare(a.Group, b.Group), strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name),
	} {
		if c != 0 {
			return c
		}
	}
	return 0
}
