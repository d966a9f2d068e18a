package apply

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resourceLister is the discovery the mapper needs: the resources of one
// group version (agent/kube.Client.Resources).
type resourceLister interface {
	Resources(ctx context.Context, gv schema.GroupVersion) (*metav1.APIResourceList, error)
}

// mapper maps kinds to resources through the member cluster's discovery
// of the group versions actually applied, one request per group version,
// cached; a kind its cache does not have asks the group version again (a
// CRD may have been added since).
type mapper struct {
	d resourceLister

	// mu guards byGV.
	mu sync.Mutex
	// byGV is each group version's resources as last discovered.
	byGV map[schema.GroupVersion]*metav1.APIResourceList
}

func newMapper(d resourceLister) *mapper {
	return &mapper{d: d, byGV: map[schema.GroupVersion]*metav1.APIResourceList{}}
}

// mapping returns the REST mapping of gvk: a meta.NoKindMatchError when
// the server does not serve it.
func (m *mapper) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	gv := gvk.GroupVersion()
	m.mu.Lock()
	l := m.byGV[gv]
	m.mu.Unlock()
	if mp, ok := find(l, gvk); ok {
		return mp, nil
	}
	l, err := m.d.Resources(ctx, gv)
	if apierrors.IsNotFound(err) {
		l, err = &metav1.APIResourceList{GroupVersion: gv.String()}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	m.mu.Lock()
	m.byGV[gv] = l
	m.mu.Unlock()
	if mp, ok := find(l, gvk); ok {
		return mp, nil
	}
	return nil, fmt.Errorf("map %s: %w", gvk, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}})
}

// find looks gvk up in the resources of its group version.
func find(l *metav1.APIResourceList, gvk schema.GroupVersionKind) (*meta.RESTMapping, bool) {
	if l == nil {
		return nil, false
	}
	for _, r := range l.APIResources {
		if r.Kind != gvk.Kind || strings.Contains(r.Name, "/") {
			continue // another kind, or a subresource (deployments/status is Kind Deployment too)
		}
		scope := meta.RESTScopeRoot
		if r.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		return &meta.RESTMapping{Resource: gvk.GroupVersion().WithResource(r.Name), GroupVersionKind: gvk, Scope: scope}, true
	}
	return nil, false
}

// reset forgets the cached discovery (after a CRD was established).
func (m *mapper) reset() {
	m.mu.Lock()
	m.byGV = map[schema.GroupVersion]*metav1.APIResourceList{}
	m.mu.Unlock()
}

// serves returns nil when every kind of gvks maps, asking discovery again
// for those the cache lacks; else the first error.
func (m *mapper) serves(ctx context.Context, gvks []schema.GroupVersionKind) error {
	for _, gvk := range gvks {
		if _, err := m.mapping(ctx, gvk); err != nil {
			return err
		}
	}
	return nil
}
