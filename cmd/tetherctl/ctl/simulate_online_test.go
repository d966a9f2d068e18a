package ctl_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// webDeployment is the Deployment of webManifests alone.
var webDeployment = webManifests[:strings.Index(webManifests, "---")]

// euImage overrides web's registry in m1.
const euImage = `apiVersion: policy.tether.io/v1alpha1
kind: OverridePolicy
metadata:
  name: eu-image
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
  overrideRules:
  - targetCluster:
      clusterNames: [m1]
    overriders:
      imageOverrider:
      - component: Registry
        operator: replace
        value: eu.registry.io
`

func TestSimulateOnline(t *testing.T) {
	h := webHub(t)
	dir := t.TempDir()
	tmpl := writeManifest(t, dir, "web.yaml", webDeployment)
	ops := writeManifest(t, t.TempDir(), "op.yaml", euImage)

	out := spaces.ReplaceAllString(mustRun(t, h.viewer, "simulate", "-f", tmpl), " ")
	for _, want := range []string{"Policy: PropagationPolicy default/web", "Scheduled: True", "m1 3 chosen",
		"m2 - rejected: cluster(s) did not match", "m3 - rejected: cluster(s) had untolerated taint", "Rendered (differences from the template):\n m1:\n",
		// The work m1's agent receives carries the hub's ownership labels.
		`metadata.labels.tether.io/managed: + "true"`, `metadata.annotations.resourcebinding.tether.io/name: + "web-deployment"`,
		"applied with ServerSideApply, conflict resolution Abort\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("simulate -f web.yaml =\n%s\nwant %q", out, want)
		}
	}
	if rendered := out[strings.Index(out, "Rendered"):]; strings.Contains(rendered, "spec.") {
		t.Errorf("simulate -f web.yaml rendered =\n%s\nwant no change of the spec", rendered)
	}

	out = spaces.ReplaceAllString(mustRun(t, h.viewer, "simulate", "-f", tmpl, "-f", ops), " ")
	if want := `spec.template.spec.containers[0].image: "nginx:1.27" -> "eu.registry.io/nginx:1.27"`; !strings.Contains(out, want) {
		t.Errorf("simulate with an override =\n%s\nwant %q", out, want)
	}
	// Nothing was stored.
	if code, _, errOut := runWith(t, h.viewer, "", "get", "op", "eu-image"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("get op eu-image after simulate = %d, %q; want not found", code, errOut)
	}

	var res struct {
		Placement struct {
			Policy    string `json:"policy"`
			Scheduled bool   `json:"scheduled"`
			Clusters  []struct {
				Name     string `json:"name"`
				Replicas int    `json:"replicas"`
			} `json:"clusters"`
			Rejected []struct{ Name string } `json:"rejected"`
		} `json:"placement"`
		Rendered []struct {
			Cluster       string `json:"cluster"`
			ApplyStrategy string `json:"applyStrategy"`
			Objects       []struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct{ Image string } `json:"containers"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"objects"`
		} `json:"rendered"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, h.viewer, "simulate", "-f", tmpl, "-f", ops, "-o", "json")), &res); err != nil {
		t.Fatal(err)
	}
	pl := res.Placement
	if !pl.Scheduled || pl.Policy != "PropagationPolicy default/web" || len(pl.Clusters) != 1 || pl.Clusters[0].Name != "m1" ||
		pl.Clusters[0].Replicas != 3 || len(pl.Rejected) != 2 {
		t.Errorf("simulate -o json placement = %+v; want m1 with 3, two rejected", pl)
	}
	if len(res.Rendered) != 1 || len(res.Rendered[0].Objects) != 1 || res.Rendered[0].ApplyStrategy != "ServerSideApply" ||
		res.Rendered[0].Objects[0].Spec.Template.Spec.Containers[0].Image != "eu.registry.io/nginx:1.27" {
		t.Errorf("simulate -o json rendered = %+v; want m1's Deployment with the eu image, applied with ServerSideApply", res.Rendered)
	}

	for _, tc := range []struct {
		args []string
		in   string
		want string
	}{
		{[]string{"simulate"}, "", `required flag(s) "filename" not set`},
		{[]string{"simulate", "-f", tmpl, "-o", "wide"}, "", "unknown output format"},
		{[]string{"simulate", "-f", tmpl, "-f", "-"}, strings.Replace(euImage, "operator: replace", "operator: sideways", 1), "fix them and simulate again"},
		{[]string{"simulate", "-f", "-"}, webManifests, "exactly one object"},
	} {
		code, _, errOut := runWith(t, h.viewer, tc.in, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("tetherctl %v = %d, %q; want 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
