package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// examplesDir is the repository's examples/, which `make demo` applies.
const examplesDir = "../../examples"

var (
	nginxRef     = ref("apps/v1", "Deployment", "nginx")
	guestbookRef = ref("apps.kruise.io/v1alpha1", "CloneSet", "guestbook")
)

// regionOf is each demo cluster's region; examples/overrides.yaml gives
// each region its registry mirror and a tether.io/region label.
var regionOf = map[string]string{edge1: "eu", edge2: "eu", regional1: "us"}

// nginxYAML is examples/nginx.yaml with its old strings replaced by the
// new ones (pairs), failing the test if one is missing: the scenario edits
// the file as a user would.
func nginxYAML(t *testing.T, oldNew ...string) string {
	t.Helper()
	data, err := os.ReadFile(examplesDir + "/nginx.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := string(data)
	for i := 0; i < len(oldNew); i += 2 {
		if !strings.Contains(y, oldNew[i]) {
			t.Fatalf("examples/nginx.yaml has no %q any more; update the test", oldNew[i])
		}
		y = strings.ReplaceAll(y, oldNew[i], oldNew[i+1])
	}
	return y
}

// testDemoScenario: `tetherctl apply -f examples/` as the demo does; nginx,
// divided by the clusters' free capacity, rolls out (aggregated
// readyReplicas = replicas); its ConfigMap follows it into every cluster it
// runs in; each region's override gives its members the region's mirror
// and label; the CloneSet is split 2:2 over the edge clusters.
func testDemoScenario(t *testing.T, s *suite7) {
	out := s.tetherctl(t, "apply", "-f", examplesDir)
	t.Logf("tetherctl apply -f examples:\n%s", out)
	s.waitRolled(t, nginxRef, -1)
	placed := s.waitPlacement(t, nginxRef, "7 replicas", func(p map[string]int32) bool { return sum(p) == 7 })
	t.Logf("nginx placed %v", placed)
	for c, n := range placed {
		if n == 0 {
			continue
		}
		region := regionOf[c]
		image := fmt.Sprintf("mirror.%s.example.com/nginx:1.27", region)
		d := s.waitMember(t, c, deploymentGVR, "nginx", fmt.Sprintf("%d ready of %s", n, image), workloadIs(int64(n), image, int64(n)))
		if got := d.GetLabels()["tether.io/region"]; got != region {
			t.Errorf("%s: nginx label tether.io/region = %q; want %q", c, got, region)
		}
		s.waitMember(t, c, configMapGVR, "nginx-index", "propagated with nginx", exists)
	}
	cloneSets := schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}
	for _, c := range []string{edge1, edge2} {
		s.waitMember(t, c, cloneSets, "guestbook", "2 replicas", workloadIs(2, "registry.k8s.io/guestbook:v3", -1))
	}
	s.waitPlacement(t, guestbookRef, "2:2 over the edge", func(p map[string]int32) bool {
		return len(p) == 2 && p[edge1] == 2 && p[edge2] == 2
	})
}

// testScaleToZero: nginx scaled to 0 keeps its member Deployments at 0
// replicas (Tether's documented choice, hub/placement/README.md: every
// selected cluster gets 0, where Karmada would delete them) and the
// aggregated status says 0; scaled back to 7, it rolls out again.
func testScaleToZero(t *testing.T, s *suite7) {
	before := s.waitPlacement(t, nginxRef, "7 replicas", func(p map[string]int32) bool { return sum(p) == 7 })
	s.apply(t, nginxYAML(t, "replicas: 7", "replicas: 0"))
	s.waitPlacement(t, nginxRef, "every cluster kept with 0", func(p map[string]int32) bool {
		return len(p) == len(before) && sum(p) == 0
	})
	for c := range before {
		s.waitMember(t, c, deploymentGVR, "nginx", "0 replicas", func(u *unstructured.Unstructured) (bool, string) {
			ok, state := workloadIs(0, "", 0)(u)
			st, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
			return ok && st == 0, fmt.Sprintf("%s, status.replicas %d", state, st)
		})
	}
	s.waitRolled(t, nginxRef, 0)

	s.apply(t, nginxYAML(t))
	s.waitRolled(t, nginxRef, 7)
	s.waitPlacement(t, nginxRef, "7 replicas", func(p map[string]int32) bool { return sum(p) == 7 })
}

// testPolicyChange: nginx's PropagationPolicy narrowed to regional-1 moves
// every replica there; the Deployment and its ConfigMap are deleted from
// the edge clusters.
func testPolicyChange(t *testing.T, s *suite7) {
	s.apply(t, nginxYAML(t, "clusterNames: [edge-1, edge-2, regional-1]", "clusterNames: [regional-1]"))
	s.waitPlacement(t, nginxRef, "all 7 on regional-1", func(p map[string]int32) bool {
		return len(p) == 1 && p[regional1] == 7
	})
	s.waitMember(t, regional1, deploymentGVR, "nginx", "7 ready", workloadIs(7, "mirror.us.example.com/nginx:1.27", 7))
	s.waitMember(t, regional1, configMapGVR, "nginx-index", "kept with nginx", exists)
	for _, c := range []string{edge1, edge2} {
		s.waitGone(t, c, deploymentGVR, "nginx")
		s.waitGone(t, c, configMapGVR, "nginx-index")
	}
	s.waitRolled(t, nginxRef, 7)
}
