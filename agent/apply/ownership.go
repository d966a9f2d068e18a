package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// The ownership labels and annotations Tether puts on every object it
// writes.
const (
	// LabelWorkKey marks an object as written by Tether for one work; its
	// value is WorkLabelValue(key). The drift informers select on it.
	LabelWorkKey = "tether.io/work-key"
	// LabelBindingUID is the uid of the hub binding the work came from.
	LabelBindingUID = "tether.io/binding-uid"
	// AnnotationWorkKey is the full work key.
	AnnotationWorkKey = "tether.io/work-key"
	// AnnotationWorkVersion is the work version last written.
	AnnotationWorkVersion = "tether.io/work-version"
	// AnnotationBinding is the binding as "namespace/name" ("name" when
	// cluster-scoped).
	AnnotationBinding = "tether.io/binding"
)

// Karmada's records of the label and annotation keys that came from the
// template (pkg/apis/work/v1alpha2), used by the UPDATE merge.
const (
	managedLabels      = "resourcetemplate.karmada.io/managed-labels"
	managedAnnotations = "resourcetemplate.karmada.io/managed-annotations"
)

// FieldManager is the server-side apply field manager and the Events'
// source component.
const FieldManager = "tether-agent"

// WorkLabelValue is the value of LabelWorkKey for a work key: the key
// itself when it is a valid label value, else "sha256-" and the first 40
// hex digits of its SHA-256.
func WorkLabelValue(key string) string {
	if len(validation.IsValidLabelValue(key)) == 0 {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256-" + hex.EncodeToString(sum[:20])
}

// owner says who owns an existing object.
type owner int

const (
	ownerNone  owner = iota // no ownership label: Tether did not create it
	ownerUs                 // this work's label
	ownerOther              // another work's label
)

// ownerOf classifies observed against the work key.
func ownerOf(observed *unstructured.Unstructured, key string) owner {
	v, ok := observed.GetLabels()[LabelWorkKey]
	switch {
	case !ok:
		return ownerNone
	case v == WorkLabelValue(key):
		return ownerUs
	default:
		return ownerOther
	}
}

// stamp adds the ownership labels and annotations of work (key, version,
// binding) to obj.
func stamp(obj *unstructured.Unstructured, key, version string, b *agentv1.BindingReference) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelWorkKey] = WorkLabelValue(key)
	if uid := b.GetUid(); uid != "" && len(validation.IsValidLabelValue(uid)) == 0 {
		labels[LabelBindingUID] = uid
	}
	obj.SetLabels(labels)
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationWorkKey] = key
	ann[AnnotationWorkVersion] = version
	if b.GetName() != "" {
		ann[AnnotationBinding] = strings.TrimPrefix(b.GetNamespace()+"/"+b.GetName(), "/")
	}
	obj.SetAnnotations(ann)
}

// appliedMeta is the labels and annotations Tether applies for manifest
// obj of work w: the manifest's own and the ownership marks (stamp).
func appliedMeta(obj *unstructured.Unstructured, w state.Work) (labels, annotations map[string]string) {
	m := &unstructured.Unstructured{Object: map[string]any{}}
	m.SetLabels(obj.GetLabels())
	m.SetAnnotations(obj.GetAnnotations())
	stamp(m, w.Key, w.Version, w.Binding)
	return m.GetLabels(), m.GetAnnotations()
}

// unstamped returns the labels and annotations of obj without Tether's
// ownership keys, for orphaning.
func unstamped(obj *unstructured.Unstructured) (labels, annotations map[string]string) {
	labels, annotations = obj.GetLabels(), obj.GetAnnotations()
	delete(labels, LabelWorkKey)
	delete(labels, LabelBindingUID)
	delete(annotations, AnnotationWorkKey)
	delete(annotations, AnnotationWorkVersion)
	delete(annotations, AnnotationBinding)
	return labels, annotations
}

// recordManaged writes Karmada's managed-labels and managed-annotations
// records of desired's own keys, unless the template already carries them
// (the hub's renderer may have written them, as Karmada's binding
// controller does).
func recordManaged(desired *unstructured.Unstructured) {
	ann := desired.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	if _, ok := ann[managedLabels]; !ok {
		ann[managedLabels] = joinKeys(desired.GetLabels())
	}
	if _, ok := ann[managedAnnotations]; !ok {
		keys := map[string]string{managedAnnotations: ""}
		for k := range ann {
			keys[k] = ""
		}
		ann[managedAnnotations] = joinKeys(keys)
	}
	desired.SetAnnotations(ann)
}

func joinKeys(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// retainClusterFields is Karmada's objectwatcher step before Retain (spec
// §2): resourceVersion, finalizers and ownerReferences come from observed;
// labels and annotations only observed has are kept, except those the
// observed record lists and desired no longer has.
func retainClusterFields(desired, observed *unstructured.Unstructured) {
	desired.SetResourceVersion(observed.GetResourceVersion())
	desired.SetFinalizers(observed.GetFinalizers())
	desired.SetOwnerReferences(observed.GetOwnerReferences())
	if m := mergeKept(desired.GetAnnotations(), observed.GetAnnotations(), observed.GetAnnotations()[managedAnnotations]); len(m) > 0 {
		desired.SetAnnotations(m)
	}
	if m := mergeKept(desired.GetLabels(), observed.GetLabels(), observed.GetAnnotations()[managedLabels]); len(m) > 0 {
		desired.SetLabels(m)
	}
}

// mergeKept is Karmada's RetainLabels/RetainAnnotations: desired's entries
// win; observed's other entries are added unless record (a comma-separated
// list of keys once propagated) names them and desired dropped them.
func mergeKept(desired, observed map[string]string, record string) map[string]string {
	out := make(map[string]string, len(desired)+len(observed))
	for k, v := range desired {
		out[k] = v
	}
	dropped := map[string]bool{}
	for _, k := range strings.Split(record, ",") {
		if _, ok := desired[k]; !ok {
			dropped[k] = true
		}
	}
	for k, v := range observed {
		if _, ok := out[k]; ok || dropped[k] {
			continue
		}
		out[k] = v
	}
	return out
}
