package ctl_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
)

// webBinding is what the detector, scheduling loop and aggregator would
// store for the web Deployment: claimed by default/web, on m1 with 3
// replicas, m2 and m3 rejected, m1 reporting 2 of 3 ready.
const webBinding = `{
  "apiVersion": "work.tether.io/v1alpha1", "kind": "ResourceBinding",
  "metadata": {"name": "web-deployment", "namespace": "default",
    "labels": {"` + bind.LabelPPPermanentID + `": "7"},
    "annotations": {"` + bind.AnnotationPPNamespace + `": "default", "` + bind.AnnotationPPName + `": "web",
      "` + placement.AnnotationRejections + `": "[{\"cluster\":\"m2\",\"reasons\":[\"cluster affinity: env=dev\"]},{\"cluster\":\"m3\",\"reasons\":[\"untolerated taint {dedicated=gpu:NoSchedule}\"]}]",
      "` + fold.AnnotationTemplateStatus + `": "{\"replicas\":3,\"readyReplicas\":2}"}},
  "spec": {
    "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"},
    "replicas": 3,
    "placement": {"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}},
    "clusters": [{"name": "m1", "replicas": 3}]},
  "status": {
    "lastScheduledTime": "2026-01-01T00:00:00Z",
    "conditions": [{"type": "Scheduled", "status": "True", "reason": "Success", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    "aggregatedStatus": [{"clusterName": "m1", "applied": true, "health": "Healthy",
      "status": {"replicas": 3, "readyReplicas": 2}}]}
}`

// webHub is a hub holding web.yaml's objects, the clusters and web's
// binding.
func webHub(t *testing.T) *onlineHub {
	t.Helper()
	h := startOnlineHub(t)
	h.putClusters(t)
	code, _, errOut := runWith(t, h.admin, webManifests, "apply", "-f", "-")
	if code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	h.put(t, store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}), webBinding)
	return h
}

// spaces collapses runs of spaces, so table rows compare whatever the
// column widths.
var spaces = regexp.MustCompile(` +`)

func TestGet(t *testing.T) {
	h := webHub(t)
	code, _, errOut := runWith(t, h.admin, strings.ReplaceAll(webManifests, "web", "api"), "apply", "-f", "-", "-n", "other")
	if code != 0 {
		t.Fatal(errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // lines, spaces collapsed; the AGE column is checked as present only
	}{
		{"plural", []string{"get", "deployments"}, []string{"NAME READY AGE", "web 2/3 "}},
		{"short name", []string{"get", "deploy", "-n", "other"}, []string{"NAME READY AGE", "api 0/3 "}},
		{"all namespaces", []string{"get", "deployment", "-A"}, []string{"NAMESPACE NAME READY AGE", "default web 2/3 ", "other api 0/3 "}},
		{"selector", []string{"get", "deployments", "-A", "-l", "app=api"}, []string{"NAMESPACE NAME READY AGE", "other api 0/3 "}},
		{"one", []string{"get", "deployment", "web"}, []string{"NAME READY AGE", "web 2/3 "}},
		{"policies", []string{"get", "pp"}, []string{"NAME AGE", "web "}},
		{"wide", []string{"get", "deployments", "-o", "wide"}, []string{"NAME READY AGE CLUSTERS LABELS", "web 2/3 "}},
		{"clusters", []string{"get", "clusters"}, []string{"NAME STATE LEASE-AGE CPU MEM PODS AGENT", "m1 Ready ", "m2 Unknown - - - - -", "m3 Unknown - - - - -"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := mustRun(t, h.viewer, tc.args...)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("tetherctl %v =\n%s\nwant %d lines", tc.args, out, len(tc.want))
			}
			for i, want := range tc.want {
				if got := spaces.ReplaceAllString(lines[i], " "); !strings.HasPrefix(got+" ", want) {
					t.Errorf("tetherctl %v line %d = %q; want it to start with %q", tc.args, i, got, want)
				}
			}
		})
	}
	if out := mustRun(t, h.viewer, "get", "deployments", "-o", "wide"); !strings.Contains(out, "m1:3") || !strings.Contains(out, "app=web") {
		t.Errorf("get deployments -o wide =\n%s\nwant the clusters (m1:3) and labels", out)
	}
}

func TestGetJSONHasAggregatedStatus(t *testing.T) {
	h := webHub(t)
	var obj struct {
		Kind   string         `json:"kind"`
		Status map[string]any `json:"status"`
	}
	out := mustRun(t, h.viewer, "get", "deployment", "web", "-o", "json")
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("get -o json = %q: %v", out, err)
	}
	if obj.Kind != "Deployment" || obj.Status["readyReplicas"] != 2.0 {
		t.Errorf("get deployment web -o json = %+v; want the Deployment with readyReplicas 2 merged in", obj)
	}
	var list struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	out = mustRun(t, h.viewer, "get", "deployments", "-o", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil || list.Kind != "List" || len(list.Items) != 1 {
		t.Errorf("get deployments -o json = %q, %v; want a List of one", out, err)
	}
	if out := mustRun(t, h.viewer, "get", "pp", "web", "-o", "yaml"); !strings.Contains(out, "kind: PropagationPolicy") {
		t.Errorf("get pp web -o yaml = %q; want the policy as YAML", out)
	}
}

func TestGetErrors(t *testing.T) {
	h := webHub(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not found", []string{"get", "deployment", "nope"}, "not found"},
		{"unknown kind", []string{"get", "frobs"}, `unknown kind "frobs"`},
		{"bad output", []string{"get", "deployments", "-o", "xml"}, `unknown output format "xml"`},
		{"bad selector", []string{"get", "deployments", "-l", "app in ("}, "invalid request: "},
		{"no kind", []string{"get"}, "accepts between 1 and 2 arg(s)"},
		{"bad flag", []string{"get", "deployments", "--frob"}, "unknown flag: --frob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runWith(t, h.viewer, "", tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("tetherctl %v = %d, stderr %q; want 1 and %q", tc.args, code, errOut, tc.want)
			}
		})
	}
	if code, _, errOut := runWith(t, h.viewer, "", "get", "deployments", "-n", "empty"); code != 0 || !strings.Contains(errOut, "No deployments found in namespace empty") {
		t.Errorf("get deployments -n empty = %d, %q; want 0 and a note", code, errOut)
	}
}

func TestDelete(t *testing.T) {
	h := webHub(t)
	file := writeManifest(t, t.TempDir(), "web.yaml", webManifests)
	if code, _, errOut := runWith(t, h.viewer, "", "delete", "deployment", "web"); code != 1 || !strings.Contains(errOut, "permission denied") {
		t.Errorf("delete as viewer = %d, %q; want permission denied", code, errOut)
	}
	if out := mustRun(t, h.admin, "delete", "deploy", "web"); out != "deployment/web deleted\n" {
		t.Errorf("delete deploy web = %q", out)
	}
	if code, _, errOut := runWith(t, h.admin, "", "delete", "deployment", "web"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("delete deployment web again = %d, %q; want not found", code, errOut)
	}
	code, out, errOut := runWith(t, h.admin, "", "delete", "-f", file)
	if code != 1 || out != "propagationpolicy/web deleted\n" || !strings.Contains(errOut, "deployment/web: not found") {
		t.Errorf("delete -f = %d, %q, %q; want the policy deleted and the deployment reported missing", code, out, errOut)
	}
	for _, args := range [][]string{{"delete", "deployment"}, {"delete", "deployment", "web", "-f", file}} {
		if code, _, _ := runWith(t, h.admin, "", args...); code != 1 {
			t.Errorf("tetherctl %v = %d; want 1", args, code)
		}
	}
}
