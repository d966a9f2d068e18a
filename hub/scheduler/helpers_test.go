package scheduler

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/placement"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// binding is a Deployment binding with placement p and replicas.
func binding(p *policyv1alpha1.Placement, replicas int32, targets ...workv1alpha1.TargetCluster) *workv1alpha1.ResourceBinding {
	return &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web-deployment"},
		Spec: workv1alpha1.ResourceBindingSpec{
			Resource:  workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod", Name: "web", UID: "uid-1"},
			Replicas:  replicas,
			Placement: p,
			Clusters:  targets,
		},
	}
}

// scheduled marks b as scheduled with its current placement.
func scheduled(b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	if b.Annotations == nil {
		b.Annotations = map[string]string{}
	}
	b.Annotations[placement.AnnotationAppliedPlacement] = place.JSONString(b.Spec.Placement)
	b.Status.LastScheduledTime = &metav1.Time{Time: t0}
	b.Status.Conditions = []metav1.Condition{{Type: placement.ConditionScheduled, Status: metav1.ConditionTrue, Reason: placement.ReasonSuccess, Message: place.MessageScheduled, LastTransitionTime: metav1.Time{Time: t0}}}
	return b
}

func tc(name string, replicas int32) workv1alpha1.TargetCluster {
	return workv1alpha1.TargetCluster{Name: name, Replicas: replicas}
}

func duplicated() *policyv1alpha1.Placement { return &policyv1alpha1.Placement{} }

// dividedStatic divides replicas by equal static weights over clusters.
func dividedStatic(clusters ...string) *policyv1alpha1.Placement {
	wp := &policyv1alpha1.ClusterPreferences{}
	for _, name := range clusters {
		wp.StaticWeightList = append(wp.StaticWeightList, policyv1alpha1.StaticClusterWeight{
			TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{name}}, Weight: 1,
		})
	}
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          wp,
	}}
}

// ready is a Ready member serving Deployments.
func ready(name string, taints ...corev1.Taint) place.Member {
	return place.Member{
		Cluster: placement.Cluster{Name: name, Taints: taints},
		APIs:    map[string]bool{place.APIKey("apps/v1", "Deployment"): true},
		State:   lease.StateReady,
	}
}

func noExecute(key string, added time.Time) corev1.Taint {
	return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: added}}
}

func lookupIn(ms []place.Member) func(string) (*place.Member, bool) {
	return func(name string) (*place.Member, bool) {
		for i := range ms {
			if ms[i].Cluster.Name == name {
				return &ms[i], true
			}
		}
		return nil, false
	}
}

func names(ts []workv1alpha1.TargetCluster) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func noExecuteToleration(key string, seconds *int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
}

// ptrTo points to a copy of v.
func ptrTo[T any](v T) *T { return &v }

func leaseOf(name string, st lease.State, since time.Time, hb *agentv1.Heartbeat) lease.Lease {
	return lease.Lease{Cluster: name, State: st, Since: since, Heartbeat: hb}
}

func storedCluster(name string, taints ...corev1.Taint) clusterv1alpha1.Cluster {
	return clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}},
		Spec:       clusterv1alpha1.ClusterSpec{Region: "eu", Taints: taints},
	}
}
