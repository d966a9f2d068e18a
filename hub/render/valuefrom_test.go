package render

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// siteCluster is a cluster of region eu labelled site=site and annotated
// with its endpoint, as the clusters of one edge fleet are.
func siteCluster(name, site, endpoint string) *clusterv1alpha1.Cluster {
	c := cluster(name, "eu")
	c.Labels["site"] = site
	c.Annotations = map[string]string{"example.com/endpoint": endpoint}
	return c
}

// sitePolicy gives every Deployment's first container env SITE from the
// cluster's site label and an endpoint annotation from the cluster's
// annotation, in one rule that targets every cluster.
func sitePolicy() policyv1alpha1.OverridePolicy {
	p := regionRegistry()
	p.Name = "site"
	p.Spec.OverrideRules = []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
		Plaintext: []policyv1alpha1.PlaintextOverrider{
			{Path: "/spec/template/spec/containers/0/env", Operator: policyv1alpha1.OverriderOpAdd, Value: json.RawMessage(`[{"name":"SITE"}]`)},
			{Path: "/spec/template/spec/containers/0/env/0/value", Operator: policyv1alpha1.OverriderOpAdd,
				ValueFrom: &policyv1alpha1.ClusterValueSource{ClusterLabel: &policyv1alpha1.ClusterKeySource{Key: "site"}}},
		},
		AnnotationsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd,
			ValueFrom: map[string]policyv1alpha1.ClusterValueSource{"endpoint": {ClusterAnnotation: &policyv1alpha1.ClusterKeySource{Key: "example.com/endpoint"}}}}},
	}}}
	return p
}

// siteOf is the SITE env value and endpoint annotation of a work.
func siteOf(t *testing.T, up *agentv1.WorkUpsert) (string, string) {
	t.Helper()
	obj := manifest(t, up)
	cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	env, _ := cs[0].(map[string]any)["env"].([]any)
	if len(env) != 1 {
		t.Fatalf("env = %v; want SITE only", env)
	}
	return env[0].(map[string]any)["value"].(string), obj.GetAnnotations()["endpoint"]
}

// TestValueFromPerCluster: clusters that one rule selects alike still get
// their own values (the renderer must not share one render among them),
// and relabelling or annotating one cluster changes only its work.
func TestValueFromPerCluster(t *testing.T) {
	e := newEnv(t)
	sites := map[string][2]string{"edge-1": {"paris", "e1:443"}, "edge-2": {"lyon", "e2:443"}, "edge-3": {"nice", "e3:443"}}
	for name, s := range sites {
		e.putCluster(siteCluster(name, s[0], s[1]))
	}
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(duplicated(), 2, target("edge-1", 2), target("edge-2", 2), target("edge-3", 2)))
	e.putOverride(sitePolicy())
	e.start()
	revs := map[string]int64{}
	for name, s := range sites {
		works, rev := e.current(name)
		revs[name] = rev
		if site, endpoint := siteOf(t, works[webKey]); site != s[0] || endpoint != s[1] {
			t.Errorf("%s: SITE, endpoint = %q, %q; want %q, %q", name, site, endpoint, s[0], s[1])
		}
	}

	e.putCluster(siteCluster("edge-2", "grenoble", "e2:443"))
	ch, _ := e.changes("edge-2", revs["edge-2"])
	if len(ch) != 1 || ch[0].Work == nil {
		t.Fatalf("Changes(edge-2) after relabelling = %v; want web", keysOf(ch))
	}
	if site, _ := siteOf(t, ch[0].Work); site != "grenoble" {
		t.Errorf("edge-2 relabelled: SITE = %q; want grenoble", site)
	}
	e.noChanges("edge-1", revs["edge-1"])
	e.noChanges("edge-3", revs["edge-3"])

	e.putCluster(siteCluster("edge-3", "nice", "e3-new:443"))
	ch, _ = e.changes("edge-3", revs["edge-3"])
	if len(ch) != 1 || ch[0].Work == nil {
		t.Fatalf("Changes(edge-3) after annotating = %v; want web", keysOf(ch))
	}
	if _, endpoint := siteOf(t, ch[0].Work); endpoint != "e3-new:443" {
		t.Errorf("edge-3 annotated: endpoint = %q; want e3-new:443", endpoint)
	}
	e.noChanges("edge-1", revs["edge-1"])
}

// TestValueFromMissingLabelKeepsWork: a cluster that loses the label a
// rule reads keeps the work it has (never one with an empty value); the
// other clusters are unaffected, and labelling it again renders it.
func TestValueFromMissingLabelKeepsWork(t *testing.T) {
	e := newEnv(t)
	e.putCluster(siteCluster("edge-1", "paris", "e1:443"))
	e.putCluster(siteCluster("edge-2", "lyon", "e2:443"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(duplicated(), 2, target("edge-1", 2), target("edge-2", 2)))
	e.putOverride(sitePolicy())
	e.start()
	before, rev2 := e.current("edge-2")
	_, rev1 := e.current("edge-1")

	unlabelled := siteCluster("edge-2", "", "e2:443")
	delete(unlabelled.Labels, "site")
	e.putCluster(unlabelled)
	e.settle()
	e.noChanges("edge-2", rev2)
	e.noChanges("edge-1", rev1)
	after, _ := e.current("edge-2")
	if site, _ := siteOf(t, after[webKey]); site != "lyon" || after[webKey].GetVersion() != before[webKey].GetVersion() {
		t.Errorf("edge-2 without its site label: SITE = %q, version %s; want the work it had (lyon, %s)",
			site, after[webKey].GetVersion(), before[webKey].GetVersion())
	}

	e.putCluster(siteCluster("edge-2", "lyon-2", "e2:443"))
	ch, _ := e.changes("edge-2", rev2)
	if len(ch) != 1 || ch[0].Work == nil {
		t.Fatalf("Changes(edge-2) after labelling again = %v; want web", keysOf(ch))
	}
	if site, _ := siteOf(t, ch[0].Work); site != "lyon-2" {
		t.Errorf("edge-2 labelled again: SITE = %q; want lyon-2", site)
	}
}
