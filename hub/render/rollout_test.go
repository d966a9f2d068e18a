package render

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
	"github.com/tetherproj/tether/hub/store"
)

func rolloutPolicyKey(name string) string {
	return store.ObjectKey(store.ObjectRef{Group: policyv1alpha1.GroupName, Kind: rollout.KindRolloutPolicy, Namespace: "default", Name: name})
}

func (e *env) putRolloutPolicy(name string) {
	e.t.Helper()
	p := policyv1alpha1.RolloutPolicy{Spec: policyv1alpha1.RolloutSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
		RolloutStrategy:   policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutProgressive}}}
	p.APIVersion, p.Kind = policyv1alpha1.GroupVersion.String(), rollout.KindRolloutPolicy
	p.Name, p.Namespace = name, "default"
	e.putRaw(rolloutPolicyKey(name), toJSON(e.t, p))
}

func (e *env) putRecord(key string, st rollout.State) {
	e.t.Helper()
	b, err := json.Marshal(rollout.Record{Policy: "default/web", State: st})
	if err != nil {
		e.t.Fatal(err)
	}
	e.putRaw(store.RolloutKey(key), b)
}

// versions returns the version of web on each cluster ("" without one).
func (e *env) versions(clusters ...string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for _, c := range clusters {
		works, _ := e.current(c)
		out[c] = works[webKey].GetVersion()
	}
	return out
}

func withImage(t *testing.T, image string) *unstructured.Unstructured {
	web := object(t, deploymentYAML)
	cs, _, _ := unstructured.NestedSlice(web.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = image
	if err := unstructured.SetNestedSlice(web.Object, cs, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	return web
}

// TestRolloutHoldsClustersNotAdmitted: a template a RolloutPolicy selects
// reaches only the clusters its stored rollout admitted to its newest
// revision; the others keep the version they have, never losing it, and
// an unknown rollout (no record yet, or one that does not decode) holds
// every cluster. Without a RolloutPolicy every cluster takes the change.
func TestRolloutHoldsClustersNotAdmitted(t *testing.T) {
	e := newEnv(t)
	names := []string{"a", "b", "c"}
	for _, n := range names {
		e.putCluster(cluster(n, "eu"))
	}
	web := withImage(t, "nginx:1.25")
	e.putTemplate(web)
	e.putBinding(web, binding(duplicated(), 1, target("a", 1), target("b", 1), target("c", 1)))
	e.start()
	e.settle()
	before := e.versions(names...)
	for _, n := range names {
		if before[n] == "" {
			t.Fatalf("Current(%s) has no %s before any rollout", n, webKey)
		}
	}

	e.putRolloutPolicy("web")
	next := withImage(t, "nginx:1.26")
	e.putTemplate(next)
	e.settle()
	if got := e.versions(names...); got["a"] != before["a"] || got["b"] != before["b"] || got["c"] != before["c"] {
		t.Fatalf("versions with a policy and no rollout record = %v; want every cluster held at %v", got, before)
	}

	rev := rollout.Revision(next, nil, nil)
	e.waitFor("the renderer to publish the revision", func() bool {
		ro, ok := e.r.Rollout(webKey)
		return ok && ro.Revision == rev
	})
	e.putRecord(webKey, rollout.State{Revision: rev, Phase: rollout.Progressing, Clusters: map[string]rollout.ClusterState{
		"a": {Phase: rollout.Updating, Revision: rev}, "b": {Phase: rollout.Pending}, "c": {Phase: rollout.Pending}}})
	e.settle()
	works, _ := e.current("a")
	if got := imageOf(t, works[webKey]); got != "nginx:1.26" {
		t.Errorf("admitted cluster a image = %q; want nginx:1.26", got)
	}
	if got := manifest(t, works[webKey]).GetAnnotations()[rollout.RevisionAnnotation]; got != rev {
		t.Errorf("admitted cluster a annotation %s = %q; want %q", rollout.RevisionAnnotation, got, rev)
	}
	got := e.versions(names...)
	if got["b"] != before["b"] || got["c"] != before["c"] {
		t.Errorf("versions of clusters not admitted = %v; want b, c held at %v", got, before)
	}
	ro, _ := e.r.Rollout(webKey)
	if !ro.Versions[got["a"]] || ro.Versions[before["b"]] {
		t.Errorf("Rollout(%s).Versions = %v; want a's %s and not the held %s", webKey, ro.Versions, got["a"], before["b"])
	}

	e.putRaw(store.RolloutKey(webKey), []byte("{not json"))
	e.putTemplate(withImage(t, "nginx:1.27"))
	e.settle()
	if now := e.versions(names...); now["a"] != got["a"] || now["b"] != before["b"] || now["c"] != before["c"] {
		t.Errorf("versions with an undecodable rollout record = %v; want every cluster kept as %v", now, got)
	}

	e.del(rolloutPolicyKey("web"))
	e.del(store.RolloutKey(webKey))
	e.settle()
	for _, n := range names {
		works, _ := e.current(n)
		if img := imageOf(t, works[webKey]); img != "nginx:1.27" {
			t.Errorf("without a RolloutPolicy, cluster %s image = %q; want nginx:1.27 at once", n, img)
		}
	}
}
