package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// quotaKey is the work key of the FederatedResourceQuota team-a/q.
const quotaKey = "policy.tether.io/FederatedResourceQuota/team-a/q"

// putQuota stores team-a/q with overall cpu 10 and, per cluster, the
// static assignment of that many CPUs.
func (e *env) putQuota(assigned map[string]string) {
	e.t.Helper()
	q := &policyv1alpha1.FederatedResourceQuota{}
	q.APIVersion, q.Kind = policyv1alpha1.GroupName+"/v1alpha1", policyv1alpha1.KindFederatedResourceQuota
	q.Namespace, q.Name = "team-a", "q"
	q.Spec.Overall = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")}
	for _, c := range []string{"a", "b", "c"} {
		if cpu, ok := assigned[c]; ok {
			q.Spec.StaticAssignments = append(q.Spec.StaticAssignments, policyv1alpha1.StaticClusterAssignment{
				ClusterName: c, Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}})
		}
	}
	e.putRaw(quotaStoreKey, toJSON(e.t, q))
}

var quotaStoreKey = store.ObjectKey(store.ObjectRef{Group: policyv1alpha1.GroupName,
	Kind: policyv1alpha1.KindFederatedResourceQuota, Namespace: "team-a", Name: "q"})

// quotaHard is the cluster's ResourceQuota team-a/q as its work has it:
// spec.hard.cpu, or "" when the cluster has no such work.
func (e *env) quotaHard(cluster string) string {
	e.t.Helper()
	works, _ := e.current(cluster)
	w, ok := works[quotaKey]
	if !ok {
		return ""
	}
	rq := decodedUpsert(e.t, w)
	if rq.GetAPIVersion() != "v1" || rq.GetKind() != "ResourceQuota" || rq.GetNamespace() != "team-a" || rq.GetName() != "q" {
		e.t.Fatalf("work %s on %s is %s %s %s/%s; want v1 ResourceQuota team-a/q", quotaKey, cluster,
			rq.GetAPIVersion(), rq.GetKind(), rq.GetNamespace(), rq.GetName())
	}
	if p := w.GetApplyOptions().GetDeletionPolicy(); p != agentv1.DeletionPolicy_DELETION_POLICY_DELETE {
		e.t.Errorf("work %s on %s has deletion policy %v; want DELETE", quotaKey, cluster, p)
	}
	cpu, _, _ := unstructured.NestedString(rq.Object, "spec", "hard", "cpu")
	return cpu
}

func decodedUpsert(t testing.TB, w *agentv1.WorkUpsert) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(w.GetManifests()[0]); err != nil {
		t.Fatalf("decode manifest of %s: %v", w.GetWorkKey(), err)
	}
	return obj
}

// TestQuotaStaticAssignments: a FederatedResourceQuota's staticAssignments
// are ResourceQuotas in the named clusters, each with its own hard; a
// cluster leaving the list loses it (DELETE, placement changed), and so
// does every cluster when the quota is deleted; a quota that does not
// decode and a restarted renderer keep what the clusters have.
func TestQuotaStaticAssignments(t *testing.T) {
	store := newEnv(t)
	for _, c := range []string{"a", "b", "c"} {
		store.putCluster(cluster(c, "eu")) // one override signature: only the assignment tells them apart
	}
	store.putQuota(map[string]string{"a": "1", "b": "2"})
	t.Run("before the restart", func(t *testing.T) {
		e := &env{t: t, st: store.st, ctx: store.ctx}
		e.start() // stopped when this subtest ends
		got := map[string]string{"a": e.quotaHard("a"), "b": e.quotaHard("b"), "c": e.quotaHard("c")}
		if diff := cmp.Diff(map[string]string{"a": "1", "b": "2", "c": ""}, got); diff != "" {
			t.Fatalf("ResourceQuota hard cpu per cluster (-want +got):\n%s", diff)
		}
		_, revA := e.current("a")
		_, revB := e.current("b")

		e.putRaw(quotaStoreKey, []byte("{not a quota"))
		e.settle()
		e.noChanges("a", revA)
		e.noChanges("b", revB)
		if gone, err := e.r.Gone(e.ctx, "b", []string{quotaKey}); err != nil || cmp.Diff(keepFor(quotaKey), gone) != "" {
			t.Errorf("Gone(b) while the quota does not decode = %v, %v; want Keep", gone, err)
		}

		e.putQuota(map[string]string{"a": "1"})
		ch, _ := e.changes("b", revB)
		want := []agentv1Change{{quotaKey, false, agentv1.DeletionPolicy_DELETION_POLICY_DELETE, agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED}}
		if diff := cmp.Diff(want, summarize(ch)); diff != "" {
			t.Errorf("Changes(b) after b left staticAssignments (-want +got):\n%s", diff)
		}
		e.noChanges("a", revA)
	})

	e := store
	e.start() // a restarted hub: a new renderer on the same store
	if hard := e.quotaHard("a"); hard != "1" {
		t.Errorf("after a restart, a's ResourceQuota hard cpu = %q; want 1", hard)
	}
	if gone, err := e.r.Gone(e.ctx, "a", []string{quotaKey}); err != nil || cmp.Diff(keepFor(quotaKey), gone) != "" {
		t.Errorf("Gone(a) after a restart = %v, %v; want Keep", gone, err)
	}
	gone, err := e.r.Gone(e.ctx, "b", []string{quotaKey})
	want := []agentv1Change{{quotaKey, false, agentv1.DeletionPolicy_DELETION_POLICY_DELETE, agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED}}
	if err != nil || cmp.Diff(want, summarize(gone)) != "" {
		t.Errorf("Gone(b) after a restart = %v, %v; want %v (the quota no longer assigns b)", summarize(gone), err, want)
	}
	_, revA := e.current("a")
	e.del(quotaStoreKey)
	ch, _ := e.changes("a", revA)
	want = []agentv1Change{{quotaKey, false, agentv1.DeletionPolicy_DELETION_POLICY_DELETE, agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED}}
	if diff := cmp.Diff(want, summarize(ch)); diff != "" {
		t.Errorf("Changes(a) after the quota's deletion (-want +got):\n%s", diff)
	}
}

// TestQuotaAssignedClusterRegistersLater: a cluster a quota names before it
// exists gets its ResourceQuota when it registers.
func TestQuotaAssignedClusterRegistersLater(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	e.putQuota(map[string]string{"a": "1", "b": "2"})
	e.start()
	_, revB := e.current("b")
	e.putCluster(cluster("b", "eu"))
	ch, _ := e.changes("b", revB)
	if len(ch) != 1 || ch[0].Key != quotaKey || ch[0].Work == nil {
		t.Fatalf("Changes(b) after it registered = %v; want the upsert of %s", summarize(ch), quotaKey)
	}
	if hard := e.quotaHard("b"); hard != "2" {
		t.Errorf("b's ResourceQuota hard cpu = %q; want 2", hard)
	}
}
