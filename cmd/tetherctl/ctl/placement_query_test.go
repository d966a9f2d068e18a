package ctl_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPlacementQuery(t *testing.T) {
	h := webHub(t)
	want := `{
  "clusters": [
    {
      "name": "m1",
      "replicas": 3
    }
  ],
  "rejected": [
    {
      "name": "m2",
      "reasons": [
        "cluster affinity: env=dev"
      ]
    },
    {
      "name": "m3",
      "reasons": [
        "untolerated taint {dedicated=gpu:NoSchedule}"
      ]
    }
  ]
}
`
	if diff := cmp.Diff(want, mustRun(t, h.viewer, "placement", "deployment/web", "-o", "json")); diff != "" {
		t.Errorf("placement deployment/web -o json (-want +got):\n%s", diff)
	}
	out := spaces.ReplaceAllString(mustRun(t, h.viewer, "placement", "deploy/web", "-n", "default"), " ")
	for _, want := range []string{"Policy: PropagationPolicy default/web", "Scheduled: True", "CLUSTER REPLICAS REASON",
		"m1 3 chosen", "m3 - rejected: untolerated taint"} {
		if !strings.Contains(out, want) {
			t.Errorf("placement deploy/web =\n%s\nwant %q", out, want)
		}
	}
	// The policy without a binding: no clusters, a message.
	code, _, _ := runWith(t, h.admin, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lone}\n", "apply", "-f", "-")
	if out := mustRun(t, h.viewer, "placement", "cm/lone"); code != 0 || !strings.Contains(out, "no propagation policy") {
		t.Errorf("placement cm/lone =\n%s\nwant no policy", out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"placement", "web"}, "want KIND/NAME"},
		{[]string{"placement", "deployment/nope"}, "not found"},
		{[]string{"placement", "pp/web"}, "only templates have a placement"},
		{[]string{"placement", "deployment/web", "-o", "wide"}, `unknown output format "wide"`},
		{[]string{"placement", "simulate"}, `required flag(s) "filename" not set`}, // still the simulate subcommand
	} {
		code, _, errOut := runWith(t, h.viewer, "", tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("tetherctl %v = %d, stderr %q; want 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	h := webHub(t)
	out := spaces.ReplaceAllString(mustRun(t, h.viewer, "describe", "deployment", "web"), " ")
	for _, want := range []string{"Name: web", "Namespace: default", "Kind: Deployment (apps/v1)", "Labels: app=web",
		"Policy: PropagationPolicy default/web", "Scheduled: True",
		" CLUSTER REPLICAS APPLIED HEALTH READY\n m1 3 True Healthy 2/3\n",
		"Rejected:\n m2: cluster affinity: env=dev\n", "Status:\n readyReplicas: 2\n replicas: 3\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("describe deployment web =\n%s\nwant %q", out, want)
		}
	}
	out = mustRun(t, h.viewer, "describe", "pp", "web")
	if !strings.Contains(out, "Kind:         PropagationPolicy") || !strings.Contains(out, "Spec:\n") || !strings.Contains(out, "  resourceSelectors:") {
		t.Errorf("describe pp web =\n%s\nwant the policy's spec", out)
	}
	if code, _, errOut := runWith(t, h.viewer, "", "describe", "deployment", "nope"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("describe deployment nope = %d, %q; want not found", code, errOut)
	}
}
