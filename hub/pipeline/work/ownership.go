package work

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter/native"
)

// Ownership labels and annotations that Render puts on every object it
// sends, naming the binding it came from. The agent adds the work version
// and filters its informers by LabelManaged.
const (
	// LabelManaged marks objects Tether manages ("true").
	LabelManaged = "tether.io/managed"
	// LabelBindingID is the permanent ID (metadata.uid) of the
	// ResourceBinding; LabelClusterBindingID that of a
	// ClusterResourceBinding.
	LabelBindingID        = "resourcebinding.tether.io/permanent-id"
	LabelClusterBindingID = "clusterresourcebinding.tether.io/permanent-id"
	// AnnotationBindingNamespace and AnnotationBindingName name a
	// ResourceBinding; AnnotationClusterBindingName a
	// ClusterResourceBinding.
	AnnotationBindingNamespace   = "resourcebinding.tether.io/namespace"
	AnnotationBindingName        = "resourcebinding.tether.io/name"
	AnnotationClusterBindingName = "clusterresourcebinding.tether.io/name"
	// AnnotationWorkKey is the key of the work the object belongs to.
	AnnotationWorkKey = "work.tether.io/key"
)

// KeyOf is the work key of a template: <group>/<Kind>/<namespace>/<name>,
// with "core" for the legacy group and "_" for a cluster-scoped template,
// as the template's store key (hub/store) without its prefix. One template
// has one work per cluster, so the key is unique within a cluster.
func KeyOf(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	return KeyOfRef(store.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()})
}

// KeyOfRef is the work key of the template stored at ref.
func KeyOfRef(ref store.ObjectRef) string {
	return strings.TrimPrefix(store.ObjectKey(ref), store.ObjectsPrefix)
}

// PermanentID is the binding's permanent ID, which Render writes into the
// ownership labels: its metadata.uid or, for a binding stored without one
// (the detector writes none), the store revision that created it, which
// tells a re-created binding from the old one. The renderer and the hub's
// Simulate both identify bindings with it.
func PermanentID(b *workv1alpha1.ResourceBinding, createRevision int64) types.UID {
	if b.UID != "" {
		return b.UID
	}
	return types.UID(strconv.FormatInt(createRevision, 10))
}

// setOwnership labels and annotates obj with its binding and work key.
func setOwnership(obj *unstructured.Unstructured, b *workv1alpha1.ResourceBinding, key string) {
	labels := maps.Clone(obj.GetLabels())
	if labels == nil {
		labels = map[string]string{}
	}
	annotations := maps.Clone(obj.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	labels[LabelManaged] = "true"
	annotations[AnnotationWorkKey] = key
	if b.Namespace == "" {
		if b.UID != "" {
			labels[LabelClusterBindingID] = string(b.UID)
		}
		annotations[AnnotationClusterBindingName] = b.Name
	} else {
		if b.UID != "" {
			labels[LabelBindingID] = string(b.UID)
		}
		annotations[AnnotationBindingNamespace] = b.Namespace
		annotations[AnnotationBindingName] = b.Name
	}
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
}

// sealed is what a version hashes, in a fixed field order.
type sealed struct {
	Manifests []json.RawMessage `json:"manifests"`
	Options   sealedOptions     `json:"applyOptions"`
	Binding   sealedBinding     `json:"binding"`
}

type sealedOptions struct {
	Strategy           int32 `json:"strategy"`
	ConflictResolution int32 `json:"conflictResolution"`
	DeletionPolicy     int32 `json:"deletionPolicy"`
}

type sealedBinding struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

// seal encodes obj and builds the upsert with its version: the hex SHA-256
// of the canonical JSON of (manifests, apply options, binding reference).
// The binding reference is hashed too because the upsert carries it and
// upserts are shared by version; it is the same for every cluster of a
// binding, so it never splits identical content. Unstructured encodes maps
// with sorted keys, so equal objects encode to equal bytes.
func seal(key string, obj *unstructured.Unstructured, opts *agentv1.ApplyOptions, ref *agentv1.BindingReference) (*agentv1.WorkUpsert, error) {
	manifest, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	s := sealed{
		Manifests: []json.RawMessage{manifest},
		Options: sealedOptions{Strategy: int32(opts.GetStrategy()),
			ConflictResolution: int32(opts.GetConflictResolution()), DeletionPolicy: int32(opts.GetDeletionPolicy())},
		Binding: sealedBinding{Namespace: ref.GetNamespace(), Name: ref.GetName(), UID: ref.GetUid()},
	}
	canonical, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode version input: %w", err)
	}
	sum := sha256.Sum256(canonical)
	return &agentv1.WorkUpsert{
		WorkKey:      key,
		Version:      hex.EncodeToString(sum[:]),
		Manifests:    [][]byte{manifest},
		ApplyOptions: opts,
		Binding:      ref,
	}, nil
}

// setTemplateGeneration records the generation of the template the object
// was rendered from, under Karmada's annotation: the member's status
// reflection compares it with the workload's observedGeneration to tell
// whether the member has caught up with this revision of the template.
func setTemplateGeneration(obj *unstructured.Unstructured, generation int64) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[native.GenerationAnnotation] = strconv.FormatInt(generation, 10)
	obj.SetAnnotations(annotations)
}
