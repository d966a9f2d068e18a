package ctl_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// sitePolicies duplicates web onto every given cluster and sets env SITE
// from each cluster's site label; the clusters are given with the
// simulation (edge-3 without the label when unlabelled is set).
func sitePolicies(unlabelled bool) string {
	var sb strings.Builder
	sb.WriteString(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: site}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - overriders:
      plaintext:
      - {path: /spec/template/spec/containers/0/env, operator: add, value: [{name: SITE}]}
      - path: /spec/template/spec/containers/0/env/0/value
        operator: add
        valueFrom: {clusterLabel: {key: site}}
`)
	for i, site := range []string{"paris", "lyon", "nice"} {
		labels := fmt.Sprintf("{site: %s}", site)
		if unlabelled && i == 2 {
			labels = "{}"
		}
		fmt.Fprintf(&sb, `---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: edge-%d, labels: %s}
status: {apiEnablements: [{groupVersion: apps/v1, resources: [{name: deployments, kind: Deployment}]}]}
`, i+1, labels)
	}
	return sb.String()
}

// TestSimulateValueFrom: simulate shows, per cluster, the value a valueFrom
// override takes there, and names the cluster that cannot answer it.
func TestSimulateValueFrom(t *testing.T) {
	h := webHub(t)
	tmpl := writeManifest(t, t.TempDir(), "web.yaml", webDeployment)
	policies := writeManifest(t, t.TempDir(), "site.yaml", sitePolicies(false))

	out := mustRun(t, h.viewer, "simulate", "-f", tmpl, "-f", policies)
	for i, site := range []string{"paris", "lyon", "nice"} {
		section := out[strings.Index(out, fmt.Sprintf("  edge-%d:\n", i+1)):]
		if end := strings.Index(section[3:], "  edge-"); end > 0 {
			section = section[:end+3]
		}
		want := fmt.Sprintf(`spec.template.spec.containers[0].env: + [{"name":"SITE","value":"%s"}]`, site)
		if !strings.Contains(spaces.ReplaceAllString(section, " "), want) {
			t.Errorf("simulate with a valueFrom override, edge-%d =\n%s\nwant %q", i+1, section, want)
		}
	}

	var res struct {
		Rendered []struct {
			Cluster string `json:"cluster"`
			Objects []struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Env []struct{ Name, Value string } `json:"env"`
							} `json:"containers"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"objects"`
		} `json:"rendered"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, h.viewer, "simulate", "-f", tmpl, "-f", policies, "-o", "json")), &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res.Rendered {
		got[r.Cluster] = fmt.Sprint(r.Objects[0].Spec.Template.Spec.Containers[0].Env)
	}
	want := map[string]string{"edge-1": "[{SITE paris}]", "edge-2": "[{SITE lyon}]", "edge-3": "[{SITE nice}]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("simulate -o json env per cluster = %v; want %v", got, want)
	}

	unlabelled := writeManifest(t, t.TempDir(), "site.yaml", sitePolicies(true))
	out = mustRun(t, h.viewer, "simulate", "-f", tmpl, "-f", unlabelled)
	for _, want := range []string{"Scheduled:  False", `cluster edge-3 has no label "site"`, "OverridePolicy default/site overrideRules[0] plaintext[1]", "  edge-1:\n", "  edge-2:\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("simulate with edge-3 unlabelled =\n%s\nwant %q", out, want)
		}
	}
	if strings.Contains(out, "  edge-3:\n") {
		t.Errorf("simulate with edge-3 unlabelled =\n%s\nwant no rendered object for edge-3", out)
	}
}
