package clientapi_test

import (
	"strings"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// quotaCPP duplicates every Deployment onto the clusters named.
func quotaCPP(clusters string) string {
	return `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: everywhere}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [` + clusters + `]}, clusterTolerations: [{operator: Exists}]}
`
}

// TestApplyClusterPolicyChangeEnforcesQuota: a ClusterPropagationPolicy
// change that would place team-a's templates over team-a's quota
// (duplicating 3 one-CPU replicas onto two clusters instead of one) is
// refused at apply, naming the namespace, the quota, the resource, what is
// used, requested and allowed; templates of a namespace without a quota
// do not count, nor does a quota of a namespace without templates (team-0,
// checked first); one that stays within it is stored.
func TestApplyClusterPolicyChangeEnforcesQuota(t *testing.T) {
	h := clusterHub(t)
	c := h.dial(t, admin)
	manifests := strings.ReplaceAll(quotaFRQ, "team-a", "team-0") + "---\n" + quotaFRQ + "---\n" + quotaCPP("m1") + "---\n" + cpuDeployment("web", 3) + "---\n" +
		strings.ReplaceAll(cpuDeployment("big", 8), "team-a", "team-b")
	if r := c.apply(t, []byte(manifests), false); anyRejectedResult(r) {
		t.Fatalf("apply = %v", r.GetResults())
	}
	// The loops are not running here: the binding they would write.
	bound := `{"apiVersion":"work.tether.io/v1alpha1","kind":"ResourceBinding","metadata":{"name":"web-deployment","namespace":"team-a"},
"spec":{"resource":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"team-a","name":"web"},"replicas":3,
"replicaRequirements":{"resourceRequest":{"cpu":"1"}},"clusters":[{"name":"m1","replicas":3}]}}`
	if _, err := h.st.Put(ctx(t), store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "web"}), []byte(bound)); err != nil {
		t.Fatal(err)
	}

	r := c.apply(t, []byte(quotaCPP("m1, m2")), false)
	res := r.GetResults()[0]
	want := "placing the 1 templates of namespace team-a it selects: FederatedResourceQuota team-a/team-a exceeded for cpu: " +
		"used 3 in the namespace (3 by the templates it selects), the templates it selects would use 6, allowed 4"
	if res.GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED || res.GetMessage() != want {
		t.Errorf("apply a ClusterPropagationPolicy duplicating web onto m1 and m2 = %v %q; want refused saying %q", res.GetOutcome(), res.GetMessage(), want)
	}
	if fe := res.GetFieldErrors(); len(fe) != 1 || fe[0].GetField() != "spec.placement" || fe[0].GetType() != "Forbidden" {
		t.Errorf("field errors = %v; want one Forbidden at spec.placement", fe)
	}
	if r := c.apply(t, []byte(quotaCPP("m1, m2")), true); r.GetResults()[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
		t.Errorf("dry run of the same = %v; want refused", r.GetResults())
	}

	// team-b has no quota: its 8 CPU count nowhere; team-a's 3 stay on m1.
	same := strings.Replace(quotaCPP("m1"), "name: everywhere", "name: everywhere, labels: {changed: \"yes\"}", 1)
	if r := c.apply(t, []byte(same), false); r.GetResults()[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_CONFIGURED {
		t.Errorf("apply the ClusterPropagationPolicy with a label = %v; want configured", r.GetResults())
	}
}
