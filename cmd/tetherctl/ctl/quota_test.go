package ctl_test

import (
	"strings"
	"testing"
)

// TestGetFederatedResourceQuota: tetherctl applies a FederatedResourceQuota
// (Karmada's group), knows it by its short name and shows its status.
// (Refusals over it: hub/clientapi's TestApplyEnforcesFederatedResourceQuota
// and test/e2e's FederatedResourceQuota step.)
func TestGetFederatedResourceQuota(t *testing.T) {
	h := startOnlineHub(t)
	const frq = `apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: q, namespace: team-a}
spec: {overall: {cpu: 4}}
`
	if out := mustRun(t, h.admin, "apply", "-f", writeManifest(t, t.TempDir(), "frq.yaml", frq)); out != "federatedresourcequota/q created\n" {
		t.Errorf("apply frq = %q", out)
	}
	out := mustRun(t, h.viewer, "get", "frq", "q", "-n", "team-a", "-o", "yaml")
	for _, want := range []string{"kind: FederatedResourceQuota", "overall:\n    cpu: \"4\"", "status:\n  overall:\n    cpu: \"4\""} {
		if !strings.Contains(out, want) {
			t.Errorf("get frq q -o yaml =\n%s\nwant %q", out, want)
		}
	}
}
