package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// keeperYAML is a Deployment duplicated to edge-1 and regional-1 whose
// policy keeps the member objects when the template is deleted.
const keeperYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: keeper, labels: {app: keeper}}
spec:
  replicas: 2
  selector: {matchLabels: {app: keeper}}
  template:
    metadata: {labels: {app: keeper}}
    spec:
      containers: [{name: app, image: "nginx:1.27"}]
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: keeper}
spec:
  preserveResourcesOnDeletion: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: keeper}]
  placement:
    clusterAffinity: {clusterNames: [edge-1, regional-1]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

// ownershipKeys are the labels and annotations the agent stamps on what it
// writes (agent/apply) and removes when it orphans an object.
var ownershipKeys = []string{"tether.io/work-key", "tether.io/binding-uid"}

// testTemplateDeletion: the demo's CloneSet deleted through the hub's API
// disappears from both edge clusters; a Deployment whose policy has
// preserveResourcesOnDeletion, deleted with tetherctl, stays in its members
// without Tether's ownership labels.
func testTemplateDeletion(t *testing.T, s *suite7) {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	if _, err := s.hub.Objects.Delete(ctx, &hubv1.DeleteRequest{Ref: guestbookRef}); err != nil {
		t.Fatalf("Delete(%s): %v", guestbookRef, err)
	}
	cloneSets := schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}
	for _, c := range []string{edge1, edge2} {
		s.waitGone(t, c, cloneSets, "guestbook")
	}

	s.apply(t, keeperYAML)
	keeper := ref("apps/v1", "Deployment", "keeper")
	s.waitRolled(t, keeper, 4)
	members := []string{edge1, regional1}
	for _, c := range members {
		s.waitMember(t, c, deploymentGVR, "keeper", "owned by Tether", func(u *unstructured.Unstructured) (bool, string) {
			_, ok := u.GetLabels()[ownershipKeys[0]]
			return ok, fmt.Sprint(u.GetLabels())
		})
	}
	s.tetherctl(t, "delete", "deployment", "keeper")
	for _, c := range members {
		d := s.waitMember(t, c, deploymentGVR, "keeper", "orphaned: no ownership labels", func(u *unstructured.Unstructured) (bool, string) {
			for _, k := range ownershipKeys {
				if _, ok := u.GetLabels()[k]; ok {
					return false, fmt.Sprint(u.GetLabels())
				}
			}
			return true, ""
		})
		if d.GetDeletionTimestamp() != nil {
			t.Errorf("%s: keeper is being deleted; want it preserved", c)
		}
		if _, ok := d.GetAnnotations()["tether.io/work-key"]; ok {
			t.Errorf("%s: keeper still has annotation tether.io/work-key: %v", c, d.GetAnnotations())
		}
		if got := ptrValue(replicasOf(d)); got != 2 {
			t.Errorf("%s: preserved keeper has %d replicas; want 2", c, got)
		}
	}
	if _, err := s.hub.Get(ctx, keeper); err == nil {
		t.Errorf("hub: keeper still stored after its deletion")
	}
}

func replicasOf(u *unstructured.Unstructured) *int64 {
	r, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		return nil
	}
	return &r
}

// karmadaYAML is written as a Karmada user would, from Karmada's docs
// (propagate a Deployment and its Service with static weights, override
// the image per cluster), only the cluster names are the fleet's. It goes
// to the hub unchanged.
const karmadaYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  labels:
    app: shop
spec:
  replicas: 4
  selector:
    matchLabels:
      app: shop
  template:
    metadata:
      labels:
        app: shop
    spec:
      containers:
      - image: nginx:1.27
        name: nginx
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: shop
spec:
  selector:
    app: shop
  ports:
  - port: 80
    targetPort: 80
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: shop-propagation
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: shop
    - apiVersion: v1
      kind: Service
      name: shop
  placement:
    clusterAffinity:
      clusterNames:
        - edge-1
        - regional-1
    replicaScheduling:
      replicaDivisionPreference: Weighted
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
          - targetCluster:
              clusterNames:
                - edge-1
            weight: 1
          - targetCluster:
              clusterNames:
                - regional-1
            weight: 3
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata:
  name: shop-override
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: shop
  overrideRules:
    - targetCluster:
        clusterNames:
          - regional-1
      overriders:
        imageOverrider:
          - component: Registry
            operator: replace
            value: registry.us.example.com
          - component: Tag
            operator: replace
            value: 1.27-alpine
        labelsOverrider:
          - operator: add
            value:
              env: us
`

// testKarmadaYAML: the Karmada file, applied with tetherctl, is accepted
// and placed as Karmada would place it: the Deployment 1:3 over edge-1 and
// regional-1, regional-1's copy with the overridden image and label, the
// Service (no replicas) in both clusters, nothing in edge-2.
func testKarmadaYAML(t *testing.T, s *suite7) {
	file := filepath.Join(t.TempDir(), "shop.yaml")
	if err := os.WriteFile(file, []byte(karmadaYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	out := s.tetherctl(t, "apply", "-f", file)
	for _, want := range []string{"deployment", "service", "propagationpolicy", "overridepolicy"} {
		if !strings.Contains(strings.ToLower(out), want) {
			t.Errorf("tetherctl apply -f shop.yaml printed no %s:\n%s", want, out)
		}
	}
	shop := ref("apps/v1", "Deployment", "shop")
	s.waitPlacement(t, shop, "1 on edge-1, 3 on regional-1", func(p map[string]int32) bool {
		return len(p) == 2 && p[edge1] == 1 && p[regional1] == 3
	})
	s.waitMember(t, edge1, deploymentGVR, "shop", "1 ready of nginx:1.27", workloadIs(1, "nginx:1.27", 1))
	d := s.waitMember(t, regional1, deploymentGVR, "shop", "3 ready, image overridden", workloadIs(3, "registry.us.example.com/nginx:1.27-alpine", 3))
	if got := d.GetLabels()["env"]; got != "us" {
		t.Errorf("%s: shop label env = %q; want us (labelsOverrider)", regional1, got)
	}
	for _, c := range []string{edge1, regional1} {
		s.waitMember(t, c, serviceGVR, "shop", "propagated", exists)
	}
	s.waitRolled(t, shop, 4)
	for _, gvr := range []schema.GroupVersionResource{deploymentGVR, serviceGVR} {
		s.waitGone(t, edge2, gvr, "shop") // never there: returns at once
	}
}

// apiYAML is a Deployment divided 1:1:1 over the three clusters.
const apiYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, labels: {app: api}}
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "nginx:1.27"}]
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]
  placement:
    clusterAffinity: {clusterNames: [edge-1, edge-2, regional-1]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [edge-1]}, weight: 1}
        - {targetCluster: {clusterNames: [edge-2]}, weight: 1}
        - {targetCluster: {clusterNames: [regional-1]}, weight: 1}
`

// freshYAML is a Deployment duplicated to every cluster (no affinity).
const freshYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: fresh, labels: {app: fresh}}
spec:
  replicas: 1
  selector: {matchLabels: {app: fresh}}
  template:
    metadata: {labels: {app: fresh}}
    spec:
      containers: [{name: fresh, image: "nginx:1.27"}]
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: fresh}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: fresh}]
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
`

// drainTaint is the NoExecute taint that drains a cluster.
const drainTaint = "tether.io/drain=true:NoExecute"

// testCordonDrain: `tetherctl cordon edge-2` keeps what runs there (api's
// replica) and places a new workload (fresh, duplicated everywhere) on the
// other clusters only; a NoExecute taint then moves api's replica off
// edge-2, whose copy is deleted only once the replacement is ready
// (graceful eviction).
func testCordonDrain(t *testing.T, s *suite7) {
	api := ref("apps/v1", "Deployment", "api")
	s.apply(t, apiYAML)
	s.waitPlacement(t, api, "1:1:1", func(p map[string]int32) bool {
		return len(p) == 3 && p[edge1] == 1 && p[edge2] == 1 && p[regional1] == 1
	})
	s.waitRolled(t, api, 3)

	s.tetherctl(t, "cordon", edge2)
	t.Cleanup(func() { s.tetherctl(t, "uncordon", edge2) })
	s.apply(t, freshYAML)
	fresh := ref("apps/v1", "Deployment", "fresh")
	s.waitRolled(t, fresh, 2)
	if p := s.waitPlacement(t, fresh, "edge-1 and regional-1", func(p map[string]int32) bool { return len(p) == 2 }); p[edge2] != 0 || len(p) != 2 {
		t.Errorf("fresh placed on %v; want edge-1 and regional-1 (edge-2 is cordoned)", p)
	}
	s.waitGone(t, edge2, deploymentGVR, "fresh")
	if p := s.waitPlacement(t, api, "unchanged", func(map[string]int32) bool { return true }); p[edge2] != 1 {
		t.Errorf("api placed %v after the cordon; want its replica kept on edge-2", p)
	}

	s.tetherctl(t, "taint", edge2, drainTaint)
	t.Cleanup(func() { s.tetherctl(t, "taint", edge2, strings.TrimSuffix(drainTaint, "=true:NoExecute")+"-") })
	s.waitPlacement(t, api, "3 replicas off edge-2", func(p map[string]int32) bool {
		_, on := p[edge2]
		return !on && sum(p) == 3
	})
	s.waitGone(t, edge2, deploymentGVR, "api")
	// The copy on edge-2 went only once the replacement was healthy.
	var ready int64
	for _, c := range []string{edge1, regional1} {
		d := s.waitMember(t, c, deploymentGVR, "api", "present", exists)
		n, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
		ready += n
	}
	if ready != 3 {
		t.Errorf("api has %d ready replicas on edge-1 and regional-1 once edge-2's copy is deleted; want 3", ready)
	}
	s.waitRolled(t, api, 3)
}
