package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// mapper maps kinds to resources through the member cluster's discovery,
// cached, and refreshes the cache once when a kind is unknown (a CRD may
// have been added since).
type mapper struct {
	rm *restmapper.DeferredDiscoveryRESTMapper
}

func newMapper(d discovery.DiscoveryInterface) *mapper {
	return &mapper{rm: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(d))}
}

// mapping returns the REST mapping of gvk.
func (m *mapper) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	mp, err := m.rm.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		m.rm.Reset()
		mp, err = m.rm.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	return mp, nil
}

// reset forgets the cached discovery (after a CRD was established).
func (m *mapper) reset() { m.rm.Reset() }
