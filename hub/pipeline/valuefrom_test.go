package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/internal/interpreter"
)

// TestTemplateValueFrom: the pipeline (what Simulate runs) renders each
// cluster's own value of a valueFrom override; relabelling one cluster
// changes only its work; a cluster without the label gets no work and a
// render error naming it, the others still render.
func TestTemplateValueFrom(t *testing.T) {
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	deployments := clusterv1alpha1.ClusterStatus{APIEnablements: []clusterv1alpha1.APIEnablement{
		{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}}
	member := func(name, site string) clusterv1alpha1.Cluster {
		c := clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"site": site}}, Status: deployments}
		if site == "" {
			c.Labels = nil
		}
		return c
	}
	pp := onto("all", "1", "", 0)
	pp.Spec.Placement.ClusterAffinity = nil
	op := policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "site"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
			Plaintext: []policyv1alpha1.PlaintextOverrider{{Path: "/metadata/labels", Operator: policyv1alpha1.OverriderOpAdd, Value: json.RawMessage(`{}`)},
				{Path: "/metadata/labels/site", Operator: policyv1alpha1.OverriderOpAdd,
					ValueFrom: &policyv1alpha1.ClusterValueSource{ClusterLabel: &policyv1alpha1.ClusterKeySource{Key: "site"}}}}}}}}}
	run := func(clusters ...clusterv1alpha1.Cluster) Result {
		in := Input{Bind: bind.Input{Template: web(), PPs: []*bind.Policy{pp}},
			Members:  place.BuildMembers(clusters, nil, now, place.Liveness{GraceUntil: now.Add(time.Hour)}),
			Clusters: clusters, Overrides: []*policyv1alpha1.OverridePolicy{&op}, Now: now}
		return Template(context.Background(), in, interp)
	}
	sites := func(res Result) map[string]string {
		out := map[string]string{}
		for _, cw := range res.Works {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(cw.Work.Upsert.GetManifests()[0]); err != nil {
				t.Fatal(err)
			}
			out[cw.Cluster] = obj.GetLabels()["site"] + " " + cw.Work.Upsert.GetVersion()
		}
		return out
	}

	before := run(member("edge-1", "paris"), member("edge-2", "lyon"), member("edge-3", "nice"))
	if before.RenderErr != nil {
		t.Fatalf("Template: render error %v", before.RenderErr)
	}
	was := sites(before)
	for c, site := range map[string]string{"edge-1": "paris", "edge-2": "lyon", "edge-3": "nice"} {
		if got, _, _ := strings.Cut(was[c], " "); got != site {
			t.Errorf("Template: %s site = %q; want %q", c, got, site)
		}
	}
	after := sites(run(member("edge-1", "paris"), member("edge-2", "grenoble"), member("edge-3", "nice")))
	for _, c := range []string{"edge-1", "edge-3"} {
		if after[c] != was[c] {
			t.Errorf("Template after relabelling edge-2: %s = %q; want it unchanged, %q", c, after[c], was[c])
		}
	}
	if got, _, _ := strings.Cut(after["edge-2"], " "); got != "grenoble" {
		t.Errorf("Template after relabelling edge-2: edge-2 site = %q; want grenoble", got)
	}

	missing := run(member("edge-1", "paris"), member("edge-2", ""))
	if missing.RenderErr == nil || !strings.Contains(missing.RenderErr.Error(), `cluster edge-2 has no label "site"`) ||
		!strings.Contains(missing.RenderErr.Error(), "OverridePolicy prod/site overrideRules[0] plaintext[1]") {
		t.Errorf("Template with edge-2 unlabelled: render error %v; want it to name edge-2, the label and the overrider", missing.RenderErr)
	}
	if got := sites(missing); len(got) != 1 || got["edge-1"] != was["edge-1"] {
		t.Errorf("Template with edge-2 unlabelled: works %v; want edge-1's only, unchanged", got)
	}
}
