package place

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
)

func storedCluster(name string, taints ...corev1.Taint) clusterv1alpha1.Cluster {
	return clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}},
		Spec:       clusterv1alpha1.ClusterSpec{Region: "eu", Taints: taints},
	}
}

func leaseOf(name string, st lease.State, since time.Time, hb *agentv1.Heartbeat) lease.Lease {
	return lease.Lease{Cluster: name, State: st, Since: since, Heartbeat: hb}
}

func TestBuildMembersTaints(t *testing.T) {
	cordon := corev1.Taint{Key: "cordoned", Effect: corev1.TaintEffectNoSchedule}
	oldUnreachable := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule}
	since := t0.Add(-time.Minute)
	at := func(tm time.Time) *metav1.Time { return &metav1.Time{Time: tm} }
	unreachableNS := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: at(since)}
	unreachableNE := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: at(since)}
	graceEnd := t0.Add(-time.Minute)
	tests := []struct {
		name  string
		lease *lease.Lease
		lv    Liveness
		admin []corev1.Taint
		want  []corev1.Taint
	}{
		{"Ready: admin taints only, stale liveness taint dropped", ptr(leaseOf("m1", lease.StateReady, since, nil)), Liveness{},
			[]corev1.Taint{cordon, oldUnreachable}, []corev1.Taint{cordon}},
		{"NotReady: not-ready NoSchedule", ptr(leaseOf("m1", lease.StateNotReady, since, nil)), Liveness{}, nil,
			[]corev1.Taint{{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule, TimeAdded: at(since)}}},
		{"Unknown: unreachable NoSchedule and NoExecute", ptr(leaseOf("m1", lease.StateUnknown, since, nil)), Liveness{},
			[]corev1.Taint{cordon}, []corev1.Taint{cordon, unreachableNS, unreachableNE}},
		{"Unknown in full disruption: NoSchedule only", ptr(leaseOf("m1", lease.StateUnknown, since, nil)), Liveness{Disrupted: true}, nil,
			[]corev1.Taint{unreachableNS}},
		{"Unknown after a disruption: NoExecute counts from its end", ptr(leaseOf("m1", lease.StateUnknown, since, nil)), Liveness{NoExecuteFloor: t0},
			nil, []corev1.Taint{unreachableNS, {Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: at(t0)}}},
		{"no lease within the start-up grace: stored taints as they are", nil, Liveness{GraceUntil: t0.Add(time.Second)},
			[]corev1.Taint{cordon, oldUnreachable}, []corev1.Taint{cordon, oldUnreachable}},
		{"no lease after the grace: unreachable since its end", nil, Liveness{GraceUntil: graceEnd},
			nil, []corev1.Taint{unreachableNS, unreachableNE}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var leases []lease.Lease
			if tt.lease != nil {
				leases = append(leases, *tt.lease)
			}
			ms := BuildMembers([]clusterv1alpha1.Cluster{storedCluster("m1", tt.admin...)}, leases, t0, tt.lv)
			if len(ms) != 1 {
				t.Fatalf("BuildMembers = %d members; want 1", len(ms))
			}
			if diff := cmp.Diff(tt.want, ms[0].Cluster.Taints); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildMembersCapacityAPIsTopology(t *testing.T) {
	hb := &agentv1.Heartbeat{
		ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"pods": "110", "cpu": "bad"}},
		ApiEnablements:  []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
		Topology:        &agentv1.Topology{Provider: "aws", Region: "us", Zones: []string{"us-1a"}},
	}
	stored := storedCluster("m1")
	stored.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}}
	stored.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Kind: "ConfigMap"}}}}
	deleting := storedCluster("m0")
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	ms := BuildMembers([]clusterv1alpha1.Cluster{stored, deleting},
		[]lease.Lease{leaseOf("m1", lease.StateReady, t0, hb), leaseOf("edge", lease.StateReady, t0, hb)}, t0, Liveness{})
	if got := names3(ms); got != "m0,m1" {
		t.Fatalf("members = %s; want m0,m1 (sorted, lease-only cluster left out)", got)
	}
	m1 := ms[1]
	if got := m1.Cluster.ResourceSummary.Allocatable.Pods().Value(); got != 110 {
		t.Errorf("m1 pods = %d; want 110 from the heartbeat", got)
	}
	if _, ok := m1.Cluster.ResourceSummary.Allocatable[corev1.ResourceCPU]; ok {
		t.Errorf("m1 cpu present; want the unparsable quantity left out")
	}
	if !m1.APIs[APIKey("apps/v1", "Deployment")] || m1.APIs[APIKey("v1", "ConfigMap")] {
		t.Errorf("m1 APIs = %v; want the heartbeat's, replacing the stored ones", m1.APIs)
	}
	if m1.Cluster.Region != "eu" || m1.Cluster.Provider != "aws" || len(m1.Cluster.Zones) != 1 {
		t.Errorf("m1 topology = %s/%s/%v; want the stored region eu, provider and zones from the heartbeat", m1.Cluster.Provider, m1.Cluster.Region, m1.Cluster.Zones)
	}
	if m1.Cluster.Labels["env"] != "prod" {
		t.Errorf("m1 labels = %v; want the stored labels", m1.Cluster.Labels)
	}
	if !ms[0].Cluster.Deleting {
		t.Errorf("m0 Deleting = false; want true (deletionTimestamp)")
	}
	noLease := BuildMembers([]clusterv1alpha1.Cluster{stored}, nil, t0, Liveness{GraceUntil: t0.Add(time.Hour)})
	if got := noLease[0].Cluster.ResourceSummary.Allocatable.Pods().Value(); got != 5 || !noLease[0].APIs[APIKey("v1", "ConfigMap")] {
		t.Errorf("without a lease: pods %d, APIs %v; want the stored status", got, noLease[0].APIs)
	}
}

func names3(ms []Member) string {
	out := ""
	for i, m := range ms {
		if i > 0 {
			out += ","
		}
		out += m.Cluster.Name
	}
	return out
}

func ptr[T any](v T) *T { return &v }
