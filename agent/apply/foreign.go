package apply

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/agent/kube"
)

// namespaceGK is the group and kind of a Namespace.
var namespaceGK = schema.GroupKind{Kind: "Namespace"}

// foreignListLimit is the page size of the lists that look for a foreign
// object in a namespace, objects per request.
const foreignListLimit = 250

// namespaceDefaults are the objects Kubernetes itself puts in every
// namespace, by resource: they do not make a namespace someone's.
var namespaceDefaults = map[schema.GroupResource]string{
	{Resource: "serviceaccounts"}: "default",
	{Resource: "configmaps"}:      "kube-root-ca.crt",
}

// noise are resources whose objects never make a namespace someone's.
var noise = map[schema.GroupResource]bool{
	{Resource: "events"}:                         true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// foreign returns the first object in namespace ns that the work key does
// not own and that would be deleted with the namespace, as "resource
// namespace/name"; "" when there is none. Objects being deleted, objects
// owned by another object (they go with their owner, which is counted
// itself), Kubernetes' defaults and events are not foreign. Any error
// (discovery incomplete included) is returned: the caller keeps the
// namespace then.
func (a *Applier) foreign(ctx context.Context, ns, key string) (string, error) {
	lists, err := a.kube.Discover(ctx)
	if err != nil {
		return "", fmt.Errorf("discover namespaced resources: %w", err)
	}
	for _, l := range kube.Preferred(lists) {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return "", err
		}
		for _, r := range l.APIResources {
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			if !r.Namespaced || noise[gr] || !canList(r) {
				continue
			}
			found, err := a.foreignIn(ctx, gv.WithResource(r.Name), ns, key)
			if err != nil || found != "" {
				return found, err
			}
		}
	}
	return "", nil
}

// foreignIn looks for a foreign object among one resource's in ns.
func (a *Applier) foreignIn(ctx context.Context, gvr schema.GroupVersionResource, ns, key string) (string, error) {
	opts := metav1.ListOptions{Limit: foreignListLimit}
	for {
		list, err := a.dyn.Resource(gvr).Namespace(ns).List(ctx, opts)
		if err != nil {
			return "", fmt.Errorf("list %s in %s: %w", gvr.GroupResource(), ns, err)
		}
		for i := range list.Items {
			if isForeign(&list.Items[i], gvr.GroupResource(), key) {
				return gvr.GroupResource().String() + " " + ns + "/" + list.Items[i].GetName(), nil
			}
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return "", nil
		}
	}
}

func isForeign(o *unstructured.Unstructured, gr schema.GroupResource, key string) bool {
	switch {
	case o.GetDeletionTimestamp() != nil, len(o.GetOwnerReferences()) > 0:
		return false
	case namespaceDefaults[gr] == o.GetName():
		return false
	default:
		return ownerOf(o, key) != ownerUs
	}
}

func canList(r metav1.APIResource) bool {
	for _, v := range r.Verbs {
		if v == "list" {
			return true
		}
	}
	return false
}

// objectName names obj for the log: "Kind namespace/name" or "Kind name".
func objectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + " " + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}
