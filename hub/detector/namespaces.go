package detector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// Namespace auto-propagation (Karmada's namespace sync controller): every
// Namespace template goes to every cluster unless a
// ClusterPropagationPolicy claims it, its name is reserved, skipped or
// "default", or it carries an opt-out label.
const (
	// LabelAutoPropagated marks a binding that auto-propagation owns (it
	// has no policy claim).
	LabelAutoPropagated = "namespace.tether.io/auto-propagated"
	// LabelAutoCreated marks a Namespace template the detector created on
	// the hub because templates were applied in a namespace the hub had
	// no Namespace for.
	LabelAutoCreated = "namespace.tether.io/auto-created"
	// namespaceDefault is never propagated (every cluster has it), as in
	// Karmada.
	namespaceDefault = "default"
)

// SkipAutoPropagationLabels opt a Namespace out of auto-propagation with
// the value "true" (any case): Karmada's label and Tether's spelling.
var SkipAutoPropagationLabels = []string{"namespace.karmada.io/skip-auto-propagation", "namespace.tether.io/skip-auto-propagation"}

// WithNamespacePropagation turns namespace auto-propagation on (the
// default, as Karmada's namespace controller) or off (Karmada's
// --controllers=-namespace): off, a Namespace is propagated only by a
// ClusterPropagationPolicy and no Namespace is created on the hub.
func WithNamespacePropagation(on bool) Option { return func(d *Detector) { d.namespaces = on } }

// PropagatesNamespace reports whether namespace name is auto-propagated
// by name: not "", "default", reserved or skipped.
func (f *Filter) PropagatesNamespace(name string) bool {
	return name != "" && name != namespaceDefault && !f.NamespaceIgnored(name)
}

// AutoPropagated reports whether t is a Namespace template that
// auto-propagation places on every cluster when no
// ClusterPropagationPolicy claims it: propagated by name and not opted
// out by label.
func (f *Filter) AutoPropagated(t *Template) bool {
	if !isNamespace(t.Ref) || !f.PropagatesNamespace(t.Ref.Name) {
		return false
	}
	labels := t.Obj.GetLabels()
	for _, k := range SkipAutoPropagationLabels {
		if strings.EqualFold(labels[k], "true") {
			return false
		}
	}
	return true
}

func isNamespace(ref store.ObjectRef) bool {
	return ref.Group == "" && ref.Kind == "Namespace" && ref.Namespace == ""
}

// namespaceRef is where the Namespace ns is stored.
func namespaceRef(ns string) store.ObjectRef {
	return store.ObjectRef{Kind: "Namespace", Name: ns}
}

// NamespacePolicy is the placement auto-propagation gives a Namespace:
// every cluster, whatever its taints (Karmada's namespace controller
// ignores them, so that a workload tolerating a taint finds its
// namespace), Duplicated, conflictResolution Abort (a namespace a member
// already has is not taken over), no failover.
// Its Ref is empty: it claims nothing. Simulations use it as the detector
// does.
func NamespacePolicy() *Policy {
	p := &Policy{Spec: policyv1alpha1.PropagationSpec{Placement: policyv1alpha1.Placement{
		ClusterTolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
	}}}
	p.Spec.SetDefaults()
	return p
}

// AutoPropagatedOf reports whether auto-propagation owns binding b.
func AutoPropagatedOf(b *workv1alpha1.ResourceBinding) bool {
	return b.Labels[LabelAutoPropagated] == "true"
}

// pinned is the placement of an auto-propagated binding whose Namespace
// was opted out: the clusters it is on and no other, so that it is never
// removed from them (as in Karmada, the label keeps existing copies) and
// no new cluster gets it. ok is false when it is on no cluster.
func pinned(b *workv1alpha1.ResourceBinding) (*policyv1alpha1.Placement, bool) {
	if len(b.Spec.Clusters) == 0 || b.Spec.Placement == nil {
		return nil, false
	}
	p := *b.Spec.Placement
	p.ClusterAffinity = &policyv1alpha1.ClusterAffinity{}
	for _, c := range b.Spec.Clusters {
		p.ClusterAffinity.ClusterNames = append(p.ClusterAffinity.ClusterNames, c.Name)
	}
	return &p, true
}

// ensureNamespace creates, on the hub, the Namespace of template t when
// the hub has none and the namespace is auto-propagated: a Kubernetes API
// server would have required it, and its members need it before t lands
// there. It never deletes or changes one: a Namespace the user applied,
// opted out or deleted while templates remain is theirs (deleted, it is
// created again as long as templates are in it).
func (d *Detector) ensureNamespace(ctx context.Context, t *Template) error {
	ns := t.Ref.Namespace
	if !d.namespaces || !d.filter.PropagatesNamespace(ns) {
		return nil
	}
	ref := namespaceRef(ns)
	if d.idx.templates[ref] != nil || d.idx.broken.templates[ref] != "" {
		return nil
	}
	data, err := namespaceObject(ns, time.Now())
	if err != nil {
		return err
	}
	rev, err := d.store.Create(ctx, store.ObjectKey(ref), data)
	if errors.Is(err, store.ErrExists) {
		return nil // the watch brings it
	}
	if err != nil {
		return fmt.Errorf("create namespace %s on the hub: %w", ns, err)
	}
	created, err := decodeTemplate(ref, store.KV{Value: data, Revision: rev, CreateRevision: rev})
	if err != nil {
		return err
	}
	d.idx.templates[ref] = created
	d.mark(ref, Cause{})
	d.log.Info("namespace created on the hub for the templates in it", "namespace", ns, "template", refString(t.Ref))
	return nil
}

// namespaceObject is the stored form of a Namespace the detector creates,
// with the metadata the hub's API gives an applied object.
func namespaceObject(ns string, now time.Time) ([]byte, error) {
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":              ns,
			"labels":            map[string]any{LabelAutoCreated: "true"},
			"uid":               string(uuid.NewUUID()),
			"creationTimestamp": now.UTC().Format(time.RFC3339),
			"generation":        1,
		},
	}
	return json.Marshal(obj)
}
