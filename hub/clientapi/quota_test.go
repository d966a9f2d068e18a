package clientapi_test

import (
	"fmt"
	"strings"
	"testing"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// quotaFRQ is a 4-CPU FederatedResourceQuota of namespace team-a.
const quotaFRQ = `apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team-a, namespace: team-a}
spec:
  overall: {cpu: 4}
`

// quotaPP duplicates team-a's Deployments onto m1 (the ready cluster).
const quotaPP = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: team-a}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [m1]}}
`

// cpuDeployment is a Deployment of team-a with replicas of one CPU each.
func cpuDeployment(name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: team-a}
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
`, name, replicas, name, name)
}

// TestApplyEnforcesFederatedResourceQuota: a template whose placement would
// take team-a over its quota is refused at apply with what is used,
// requested and allowed, and nothing of the request is stored; one that
// fits is stored; what other bindings of the namespace use counts.
func TestApplyEnforcesFederatedResourceQuota(t *testing.T) {
	h := clusterHub(t)
	c := h.dial(t, admin)
	if r := c.apply(t, []byte(quotaFRQ+"---\n"+quotaPP), false); strings.Join(outcomes(r), ",") !=
		"FederatedResourceQuota team-a/team-a CREATED,PropagationPolicy team-a/all CREATED" {
		t.Fatalf("apply quota and policy = %v", outcomes(r))
	}
	for _, tc := range []struct {
		name, manifests string
		want            []string // outcomes
		message         string
	}{
		{"5 CPU refused", cpuDeployment("web", 5), []string{"Deployment team-a/web REJECTED"},
			"FederatedResourceQuota team-a/team-a exceeded for cpu: used 0 in the namespace (0 by this template), this template would use 5, allowed 4"},
		{"dry run refused too", cpuDeployment("web", 6), []string{"Deployment team-a/web REJECTED"}, "would use 6, allowed 4"},
		{"two of 3 CPU in one request", cpuDeployment("a1", 3) + "---\n" + cpuDeployment("a2", 3),
			[]string{"Deployment team-a/a1 CREATED", "Deployment team-a/a2 REJECTED"},
			"used 3 in the namespace (0 by this template), this template would use 3, allowed 4"},
		{"3 CPU fits", cpuDeployment("web", 3), []string{"Deployment team-a/web CREATED"}, ""},
		{"a lowered quota in the same request", strings.Replace(quotaFRQ, "cpu: 4", "cpu: 2", 1) + "---\n" + cpuDeployment("api", 3),
			[]string{"FederatedResourceQuota team-a/team-a CONFIGURED", "Deployment team-a/api REJECTED"}, "would use 3, allowed 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.apply(t, []byte(tc.manifests), strings.HasPrefix(tc.name, "dry run"))
			if got := outcomes(r); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("apply = %v (%v); want %v", got, r.GetResults(), tc.want)
			}
			if msg := r.GetResults()[len(r.GetResults())-1].GetMessage(); tc.message != "" && !strings.Contains(msg, tc.message) {
				t.Errorf("apply message = %q; want %q", msg, tc.message)
			}
		})
	}

	// Another template of team-a is bound to 2 CPU: 3 more do not fit, 2 do.
	other := `{"apiVersion":"work.tether.io/v1alpha1","kind":"ResourceBinding","metadata":{"name":"db-deployment","namespace":"team-a"},
"spec":{"resource":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"team-a","name":"db"},"replicas":2,
"replicaRequirements":{"resourceRequest":{"cpu":"1"}},"clusters":[{"name":"m1","replicas":2}]}}`
	if _, err := h.st.Put(ctx(t), store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "db"}), []byte(other)); err != nil {
		t.Fatal(err)
	}
	got := getObject(t, c, &hubv1.ObjectRef{ApiVersion: "policy.karmada.io/v1alpha1", Kind: "FederatedResourceQuota", Namespace: "team-a", Name: "team-a"})
	if st := fmt.Sprint(got["status"]); st != "map[aggregatedStatus:[map[clusterName:m1 hard:map[cpu:4] used:map[cpu:2]]] overall:map[cpu:4] overallUsed:map[cpu:2]]" {
		t.Errorf("get FederatedResourceQuota status = %s; want 2 CPU used, all in m1", st)
	}
	r := c.apply(t, []byte(cpuDeployment("api", 3)), false)
	if r.GetResults()[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED ||
		!strings.Contains(r.GetResults()[0].GetMessage(), "used 2 in the namespace (0 by this template), this template would use 3, allowed 4") {
		t.Errorf("apply api with 3 CPU beside db's 2 = %v; want refused, used 2", r.GetResults())
	}
	if r := c.apply(t, []byte(cpuDeployment("api", 2)), false); r.GetResults()[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_CREATED {
		t.Errorf("apply api with 2 CPU beside db's 2 = %v; want created", r.GetResults())
	}
}

// TestApplyPolicyChangeEnforcesQuota: a PropagationPolicy change that would
// place team-a's templates over its quota (duplicating 3 one-CPU replicas
// onto two clusters instead of one) is refused at apply, naming the quota;
// one that stays within it is stored.
func TestApplyPolicyChangeEnforcesQuota(t *testing.T) {
	h := clusterHub(t)
	c := h.dial(t, admin)
	if r := c.apply(t, []byte(quotaFRQ+"---\n"+quotaPP+"---\n"+cpuDeployment("web", 3)), false); anyRejectedResult(r) {
		t.Fatalf("apply = %v", r.GetResults())
	}
	// The loops are not running here: the binding they would write.
	bound := `{"apiVersion":"work.tether.io/v1alpha1","kind":"ResourceBinding","metadata":{"name":"web-deployment","namespace":"team-a"},
"spec":{"resource":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"team-a","name":"web"},"replicas":3,
"replicaRequirements":{"resourceRequest":{"cpu":"1"}},"clusters":[{"name":"m1","replicas":3}]}}`
	if _, err := h.st.Put(ctx(t), store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "web"}), []byte(bound)); err != nil {
		t.Fatal(err)
	}
	wider := strings.Replace(quotaPP, "placement: {clusterAffinity: {clusterNames: [m1]}}",
		"placement: {clusterAffinity: {clusterNames: [m1, m2]}, clusterTolerations: [{operator: Exists}]}", 1)
	r := c.apply(t, []byte(wider), false)
	if r.GetResults()[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED ||
		!strings.Contains(r.GetResults()[0].GetMessage(), "placing the 1 templates it selects: FederatedResourceQuota team-a/team-a exceeded for cpu: used 3 in the namespace (3 by the templates it selects), the templates it selects would use 6, allowed 4") {
		t.Errorf("apply a policy duplicating web onto m1 and m2 = %v; want refused over the quota", r.GetResults())
	}
	same := strings.Replace(quotaPP, "name: all", "name: all, labels: {changed: \"yes\"}", 1)
	if r := c.apply(t, []byte(same), false); r.GetResults()[0].GetOutcome() != hubv1.ApplyOutcome_APPLY_OUTCOME_CONFIGURED {
		t.Errorf("apply the policy with a label = %v; want configured", r.GetResults())
	}
}

func anyRejectedResult(r *hubv1.ApplyResponse) bool {
	for _, res := range r.GetResults() {
		if res.GetOutcome() == hubv1.ApplyOutcome_APPLY_OUTCOME_REJECTED {
			return true
		}
	}
	return false
}
