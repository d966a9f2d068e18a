package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// object is a core/v1 object: serializable, with metadata.
type object interface {
	runtime.Object
	metav1.Object
}

// Resource is a typed client of one core/v1 resource, in one namespace
// when namespaced. Its methods have the signatures of client-go's typed
// clients.
type Resource[T object, L runtime.Object] struct {
	rest      rest.Interface
	resource  string
	namespace string
	newObj    func() T
	newList   func() L
}

// Get reads the object name.
func (r Resource[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := r.newObj()
	err := r.request(r.rest.Get()).Name(name).VersionedParams(&opts, parameterCodec).Do(ctx).Into(out)
	return out, err
}

// List lists the objects opts select.
func (r Resource[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := r.newList()
	err := r.request(r.rest.Get()).VersionedParams(&opts, parameterCodec).Do(ctx).Into(out)
	return out, err
}

// Create creates obj and returns it as stored.
func (r Resource[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := r.newObj()
	err := r.request(r.rest.Post()).VersionedParams(&opts, parameterCodec).Body(obj).Do(ctx).Into(out)
	return out, err
}

// Update replaces the object obj names and returns it as stored.
func (r Resource[T, L]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	out := r.newObj()
	err := r.request(r.rest.Put()).Name(obj.GetName()).VersionedParams(&opts, parameterCodec).Body(obj).Do(ctx).Into(out)
	return out, err
}

// request sets the namespace, when there is one, and the resource.
func (r Resource[T, L]) request(req *rest.Request) *rest.Request {
	return req.NamespaceIfScoped(r.namespace, r.namespace != "").Resource(r.resource)
}
