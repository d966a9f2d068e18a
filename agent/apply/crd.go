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
// True, then refreshes the REST mapper so its kinds map.
func (a *Applier) waitEstablished(ctx context.Context, gvr schema.GroupVersionResource, name string) error {
	ctx, cancel := context.WithTimeout(ctx, a.crdTimeout)
	defer cancel()
	tick := time.NewTicker(crdPollInterval)
	defer tick.Stop()
	for {
		crd, err := a.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err == nil && established(crd) {
			a.mapper.reset()
			return nil
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
