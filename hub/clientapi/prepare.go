package clientapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tetherproj/tether/api/codec"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// item is one input object on its way to the store.
type item struct {
	doc document
	// ref names the object as the input did, namespace defaulted.
	ref *hubv1.ObjectRef
	// key is where it is stored (canonical group).
	key store.ObjectRef
	// obj is what would be stored, hub metadata and status left out; nil
	// when rejected.
	obj map[string]any
	// typed is the decoded object of Tether's kinds, defaulted; nil for
	// templates.
	typed codec.Object
	// errs and message say why it is rejected; both empty when valid.
	errs    []*hubv1.FieldError
	message string
}

func (it *item) rejected() bool { return it.message != "" || len(it.errs) > 0 }

func (it *item) reject(msg string, errs ...*hubv1.FieldError) {
	it.message, it.errs = msg, append(it.errs, errs...)
}

// scopes finds the scope of custom resources from the
// CustomResourceDefinitions of the input and, once asked, of the store.
type scopes struct {
	b      *backend
	crds   map[schema.GroupKind]scope
	loaded bool
}

// prepare validates every document and computes what would be stored.
// Objects that name no namespace get defaultNS when namespaced.
// With clusters, Cluster objects are accepted (Simulate takes them as the
// cluster snapshot); Apply refuses them.
func (b *backend) prepare(ctx context.Context, docs []document, defaultNS string, clusters bool) ([]*item, error) {
	sc := &scopes{b: b, crds: map[schema.GroupKind]scope{}}
	for _, d := range docs {
		if gk, s, ok := crdScope(d.obj); ok {
			sc.crds[gk] = s
		}
	}
	items := make([]*item, len(docs))
	for i, d := range docs {
		it := &item{doc: d}
		if !withinBounds(it) {
			items[i] = it
			continue
		}
		if codec.OwnGroup(d.apiVersion) {
			preparePolicy(it, defaultNS, clusters)
		} else if err := sc.prepareTemplate(ctx, it, defaultNS); err != nil {
			return nil, err
		}
		items[i] = it
	}
	markDuplicates(items)
	if err := b.checkCustomizations(ctx, items); err != nil {
		return nil, err
	}
	return items, nil
}

// preparePolicy strictly decodes one of Tether's kinds, defaults and
// validates it.
func preparePolicy(it *item, defaultNS string, clusters bool) {
	d := it.doc
	it.ref = &hubv1.ObjectRef{ApiVersion: d.apiVersion, Kind: d.kind}
	meta, _ := d.obj["metadata"].(map[string]any)
	it.ref.Namespace, _ = meta["namespace"].(string)
	it.ref.Name, _ = meta["name"].(string)
	info, known := codec.Lookup(d.apiVersion, d.kind)
	if known && info.GVK.Kind == "Cluster" && !clusters {
		msg, errs := clusterRefusal(d.obj)
		it.reject(msg, errs...)
		return
	}
	if known && hubManaged(info.GVK.Kind) && info.GVK.Kind != "Cluster" {
		it.reject(fmt.Sprintf("%s objects are managed by the hub, not applied: clusters register with a bootstrap token, bindings come from propagation policies", d.kind))
		return
	}
	obj, err := codec.DecodeDocument(&codec.Document{Index: d.index, JSON: d.js, APIVersion: d.apiVersion, Kind: d.kind})
	if err != nil {
		it.reject(err.Error(), codecFieldErrors(err)...)
		return
	}
	if info.Namespaced && obj.GetNamespace() == "" {
		obj.SetNamespace(defaultNS)
	}
	it.ref.Namespace = obj.GetNamespace()
	var errs field.ErrorList
	if !info.Namespaced && obj.GetNamespace() != "" {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), obj.GetNamespace(), d.kind+" is cluster-scoped"))
	}
	obj.SetDefaults()
	errs = append(errs, obj.Validate()...)
	errs = append(errs, validateName(obj.GetName())...)
	if len(errs) > 0 {
		it.reject(fmt.Sprintf("%s %s is invalid: %v", d.kind, it.ref.Name, errs.ToAggregate()), fieldErrors(errs)...)
		return
	}
	codec.Canonical(obj)
	js, err := codec.Encode(obj)
	if err == nil {
		it.obj, err = decodeObject(js)
	}
	if err != nil {
		it.reject(err.Error())
		return
	}
	stripHubOwned(it.obj)
	it.typed = obj
	it.key = store.ObjectRef{Group: info.GVK.Group, Kind: d.kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// clusterRefusal says why a Cluster is not applied and what to do instead;
// spec.resourceModels, which a Karmada user sets on the Cluster, is named
// with the command that sets it.
func clusterRefusal(obj map[string]any) (string, []*hubv1.FieldError) {
	msg := "Cluster objects are managed by the hub, not applied: clusters register with a bootstrap token " +
		"(tetherctl token create, tetherctl join); change a cluster's labels, annotations and taints with " +
		"tetherctl label|annotate|taint cluster NAME"
	spec, _ := obj["spec"].(map[string]any)
	if _, ok := spec["resourceModels"]; !ok {
		return msg, nil
	}
	detail := "resource models of a registered cluster are set with tetherctl cluster models NAME -f FILE " +
		"(this file is accepted there as is), not applied"
	return msg + "; " + detail, []*hubv1.FieldError{{Field: "spec.resourceModels", Type: string(field.ErrorTypeForbidden), Detail: detail}}
}

// hubManaged are kinds of Tether's API the hub writes itself.
func hubManaged(kind string) bool {
	switch kind {
	case "Cluster", "ResourceBinding", "ClusterResourceBinding":
		return true
	}
	return false
}

// prepareTemplate checks a resource template of any kind: apiVersion, kind
// and metadata.name are required, the namespace follows the kind's scope,
// labels must be valid, the apply.tether.io/strategy annotation names a
// strategy.
func (sc *scopes) prepareTemplate(ctx context.Context, it *item, defaultNS string) error {
	d := it.doc
	meta, _ := d.obj["metadata"].(map[string]any)
	it.ref = &hubv1.ObjectRef{ApiVersion: d.apiVersion, Kind: d.kind}
	it.ref.Namespace, _ = meta["namespace"].(string)
	it.ref.Name, _ = meta["name"].(string)
	errs := typeMetaErrors(d)
	if _, ok := d.obj["metadata"]; ok && meta == nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), d.obj["metadata"], "must be an object"))
	}
	errs = append(errs, validateName(it.ref.Name)...)
	if len(errs) > 0 {
		it.reject(fmt.Sprintf("document %d is not a valid object: %v", d.index, errs.ToAggregate()), fieldErrors(errs)...)
		return nil
	}
	gv, _ := schema.ParseGroupVersion(d.apiVersion)
	s, err := sc.scopeOf(ctx, schema.GroupKind{Group: gv.Group, Kind: d.kind})
	if err != nil {
		return err
	}
	errs = namespaceRule(it, s, defaultNS)
	errs = append(errs, labelErrors(meta)...)
	errs = append(errs, annotationErrors(meta)...)
	errs = append(errs, strategyErrors(meta)...)
	errs = append(errs, redactedErrors(d, meta)...)
	errs = append(errs, replicaErrors(schema.GroupKind{Group: gv.Group, Kind: d.kind}, d.obj)...)
	if len(errs) > 0 {
		it.reject(fmt.Sprintf("%s %s is invalid: %v", d.kind, it.ref.Name, errs.ToAggregate()), fieldErrors(errs)...)
		return nil
	}
	it.obj = deepCopyJSON(d.obj)
	stripHubOwned(it.obj)
	if it.ref.Namespace != "" {
		it.obj["metadata"].(map[string]any)["namespace"] = it.ref.Namespace
	}
	it.key = store.ObjectRef{Group: gv.Group, Kind: d.kind, Namespace: it.ref.Namespace, Name: it.ref.Name}
	return nil
}

func typeMetaErrors(d document) field.ErrorList {
	var errs field.ErrorList
	if d.apiVersion == "" {
		errs = append(errs, field.Required(field.NewPath("apiVersion"), "every object names its apiVersion"))
	} else if _, err := schema.ParseGroupVersion(d.apiVersion); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), d.apiVersion, err.Error()))
	}
	if d.kind == "" {
		errs = append(errs, field.Required(field.NewPath("kind"), "every object names its kind"))
	}
	return errs
}

// namespaceRule applies the scope: a namespaced object without namespace
// gets defaultNS, a cluster-scoped one may not have one. A custom resource
// of unknown scope keeps the namespace it names and gets defaultNS when it
// names none (most custom resources are namespaced; apply the CRD with
// scope: Cluster to make the hub store its objects cluster-scoped).
func namespaceRule(it *item, s scope, defaultNS string) field.ErrorList {
	switch {
	case s == scopeCluster && it.ref.Namespace != "":
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), it.ref.Namespace, it.ref.Kind+" is cluster-scoped")}
	case s == scopeCluster:
		return nil
	case it.ref.Namespace == "":
		it.ref.Namespace = defaultNS
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(it.ref.Namespace) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "namespace"), it.ref.Namespace, msg))
	}
	return errs
}

func labelErrors(meta map[string]any) field.ErrorList {
	raw, ok := meta["labels"].(map[string]any)
	if !ok {
		return nil
	}
	labels := make(map[string]string, len(raw))
	var errs field.ErrorList
	for k, v := range raw {
		s, ok := v.(string)
		if !ok {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "labels").Key(k), v, "must be a string"))
		}
		labels[k] = s
	}
	return append(errs, metav1validation.ValidateLabels(labels, field.NewPath("metadata", "labels"))...)
}

// validateName checks that a name can be a store key: not empty, no "/",
// not "." or "..", at most 253 characters.
func validateName(name string) field.ErrorList {
	p := field.NewPath("metadata", "name")
	switch {
	case name == "":
		return field.ErrorList{field.Required(p, "every object has a name")}
	case name == "." || name == ".." || strings.Contains(name, "/") || strings.Contains(name, "%"):
		return field.ErrorList{field.Invalid(p, name, `may not be "." or "..", nor contain "/" or "%"`)}
	case len(name) > validation.DNS1123SubdomainMaxLength:
		return field.ErrorList{field.TooLong(p, name, validation.DNS1123SubdomainMaxLength)}
	}
	return nil
}

// scopeOf is the scope of gk: built in, from a CRD of the input or the
// store, or unknown.
func (sc *scopes) scopeOf(ctx context.Context, gk schema.GroupKind) (scope, error) {
	if ns, ok := builtinKinds[gk]; ok {
		return scopeOfBool(ns), nil
	}
	if s, ok := sc.crds[gk]; ok {
		return s, nil
	}
	if !sc.loaded {
		sc.loaded = true
		kvs, _, err := sc.b.st.List(ctx, store.KindPrefix(store.ObjectsPrefix, crdKind.Group, crdKind.Kind, ""))
		if err != nil {
			return scopeUnknown, err
		}
		for _, kv := range kvs {
			if obj, err := decodeObject(kv.Value); err == nil {
				if g, s, ok := crdScope(obj); ok {
					if _, fromInput := sc.crds[g]; !fromInput {
						sc.crds[g] = s
					}
				}
			}
		}
		return sc.scopeOf(ctx, gk)
	}
	return scopeUnknown, nil
}

// crdScope reads the group, kind and scope a CustomResourceDefinition
// defines.
func crdScope(obj map[string]any) (schema.GroupKind, scope, bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if kind != crdKind.Kind || !strings.HasPrefix(apiVersion, crdKind.Group+"/") {
		return schema.GroupKind{}, scopeUnknown, false
	}
	spec, _ := obj["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, _ := spec["group"].(string)
	k, _ := names["kind"].(string)
	s, _ := spec["scope"].(string)
	if k == "" {
		return schema.GroupKind{}, scopeUnknown, false
	}
	return schema.GroupKind{Group: group, Kind: k}, scopeOfBool(s != "Cluster"), true
}

// markDuplicates rejects every repetition of an object in one input.
func markDuplicates(items []*item) {
	seen := map[store.ObjectRef]int{}
	for _, it := range items {
		if it.rejected() {
			continue
		}
		if first, ok := seen[it.key]; ok {
			it.reject(fmt.Sprintf("the input holds %s %s twice (documents %d and %d)", it.ref.Kind, it.ref.Name, first, it.doc.index),
				&hubv1.FieldError{Field: "metadata.name", Type: string(field.ErrorTypeDuplicate), BadValue: it.ref.Name, Detail: "the same object appears twice in the input"})
			continue
		}
		seen[it.key] = it.doc.index
	}
}

// fieldErrors converts validation errors to the API's.
func fieldErrors(errs field.ErrorList) []*hubv1.FieldError {
	out := make([]*hubv1.FieldError, 0, len(errs))
	for _, e := range errs {
		fe := &hubv1.FieldError{Field: e.Field, Type: string(e.Type), Detail: e.Detail}
		if e.Type != field.ErrorTypeRequired && e.BadValue != nil {
			fe.BadValue = fmt.Sprint(e.BadValue)
		}
		out = append(out, fe)
	}
	return out
}

// codecFieldErrors converts the decoding errors of api/codec.
func codecFieldErrors(err error) []*hubv1.FieldError {
	var out []*hubv1.FieldError
	for _, e := range codec.FieldErrors(err) {
		detail := e.Detail
		if detail == "" {
			detail = e.Error()
		}
		out = append(out, &hubv1.FieldError{Field: e.Path, Type: string(e.Type), Detail: detail})
	}
	if len(out) == 0 && errors.Is(err, codec.ErrUnknownKind) {
		out = append(out, &hubv1.FieldError{Field: "kind", Type: string(field.ErrorTypeNotSupported), Detail: err.Error()})
	}
	return out
}
