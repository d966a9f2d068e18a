package apply

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdPollInterval is how often waitEstablished looks at a new CRD.
const crdPollInterval = 100 * time.Millisecond

// waitEstablished waits until the CRD name has the condition Established
// True and the member's discovery serves its kind in every served version
// (the REST mapper asks again): the API server updates discovery after it
// sets the condition, so a custom resource applied next could otherwise
// find no kind.
func (a *Applier) waitEstablished(ctx context.Context, gvr schema.GroupVersionResource, name string) error {
	ctx, cancel := context.WithTimeout(ctx, a.crdTimeout)
	defer cancel()
	tick := time.NewTicker(crdPollInterval)
	defer tick.Stop()
	for {
		crd, err := a.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err == nil && established(crd) {
			a.mapper.reset()
			if err = a.mapper.serves(ctx, servedKinds(crd)); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("CRD %s not established: %w", name, err)
		case <-tick.C:
		}
	}
}

// established reports whether a CRD's Established condition is True.
func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// servedKinds are the kinds a CRD serves: its kind in each served version.
func servedKinds(crd *unstructured.Unstructured) []schema.GroupVersionKind {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var out []schema.GroupVersionKind
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if name, _ := m["name"].(string); ok && name != "" && m["served"] == true {
			out = append(out, schema.GroupVersionKind{Group: group, Version: name, Kind: kind})
		}
	}
	return out
}
