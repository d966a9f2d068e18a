package integration

import (
	"encoding/json"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// dividedWebYAML places web's replicas on cluster-a, Divided, so that the
// hub revises them with the interpreter.
const dividedWebYAML = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [cluster-a]}
    replicaScheduling: {replicaSchedulingType: Divided}
---
`

// reviseRICYAML revises Deployments' replicas and marks them revised.
const reviseRICYAML = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: web-revise}
spec:
  target: {apiVersion: apps/v1, kind: Deployment}
  customizations:
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desiredReplica)
          obj.spec.replicas = desiredReplica
          if obj.metadata.annotations == nil then obj.metadata.annotations = {} end
          obj.metadata.annotations["example.com/revised-by"] = "ric"
          return obj
        end
`

// TestCustomizationChangeReachesTheAgents: applying a customization that
// changes how the hub renders a kind sends the agent the re-rendered work
// without any change to the template, and deleting it sends the original
// version back (Karmada #5238).
func TestCustomizationChangeReachesTheAgents(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	a := dialAdmin(t, dir, h.addr)
	ctx := ctxFor(t)
	sa := connectReady(ctx, t, mintAgent(t, dir, "cluster-a"), h.addr, nil)
	defer sa.close()
	a.mustApply(ctx, deploymentYAML("web", "nginx:1.27", 2)+dividedWebYAML)
	original := receiveWorks(t, sa, keyWeb)[keyWeb]

	a.mustApply(ctx, reviseRICYAML)
	u := waitUpsert(t, sa, keyWeb)
	if u.GetVersion() == original || annotation(t, u.GetManifests()[0], "example.com/revised-by") != "ric" {
		t.Fatalf("web after the customization: version %s (was %s), revised-by %q; want a new version revised by ric",
			u.GetVersion(), original, annotation(t, u.GetManifests()[0], "example.com/revised-by"))
	}
	if err := sa.ack(keyWeb, u.GetVersion()); err != nil {
		t.Fatal(err)
	}

	deleteObject(ctx, t, a, &hubv1.ObjectRef{ApiVersion: "config.tether.io/v1alpha1", Kind: "ResourceInterpreterCustomization", Name: "web-revise"})
	if u := waitUpsert(t, sa, keyWeb); u.GetVersion() != original {
		t.Errorf("web after deleting the customization has version %s; want the original %s", u.GetVersion(), original)
	}
}

func annotation(t *testing.T, manifest []byte, key string) string {
	t.Helper()
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(manifest, &obj); err != nil {
		t.Fatal(err)
	}
	return obj.Metadata.Annotations[key]
}
