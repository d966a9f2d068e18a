package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SetCached puts obj into the drift informer's cache of gvr as it is, as
// if the informer had not seen the object's later changes yet.
func SetCached(a *Applier, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	a.watch.mu.Lock()
	inf := a.watch.informers[gvr]
	a.watch.mu.Unlock()
	return inf.GetStore().Update(obj)
}

// DropCached removes obj from the drift informer's cache of gvr, as if the
// informer had not seen it yet.
func DropCached(a *Applier, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	a.watch.mu.Lock()
	inf := a.watch.informers[gvr]
	a.watch.mu.Unlock()
	return inf.GetStore().Delete(obj)
}
