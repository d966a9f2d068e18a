package ctl_test

import (
	"strings"
	"testing"
)

// TestGetFederatedResourceQuota: tetherctl applies a FederatedResourceQuota
// (Karmada's group), knows it by its short name and plural and shows its status in
// Get and List.
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
	for _, args := range [][]string{{"get", "frq", "q", "-n", "team-a", "-o", "yaml"}, {"get", "federatedresourcequotas", "-n", "team-a", "-o", "yaml"}} {
		out := mustRun(t, h.viewer, args...)
		for _, want := range []string{"kind: FederatedResourceQuota", "cpu: \"4\"", "status:", "overall:"} {
			if !strings.Contains(out, want) {
				t.Errorf("tetherctl %v =\n%s\nwant %q", args, out, want)
			}
		}
	}
}
