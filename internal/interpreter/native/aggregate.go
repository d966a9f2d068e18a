package native

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

type aggregateFunc func(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error)

var aggregateHandlers = map[schema.GroupVersionKind]aggregateFunc{
	deploymentGVK:  aggregateDeployment,
	replicaSetGVK:  aggregateReplicaSet,
	statefulSetGVK: aggregateStatefulSet,
	daemonSetGVK:   aggregateDaemonSet,
	serviceGVK:     aggregateService,
	ingressGVK:     aggregateIngress,
	jobGVK:         aggregateJob,
	cronJobGVK:     aggregateCronJob,
	podGVK:         aggregatePod,
	pvGVK:          aggregatePV,
	pvcGVK:         aggregatePVC,
	pdbGVK:         aggregatePDB,
	hpaGVK:         aggregateHPA,
}

// AggregateStatus returns obj with the member statuses in items folded into
// its status. When nothing changes obj itself is returned; otherwise the
// result is a typed round trip of obj.
func (*Interpreter) AggregateStatus(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	handler, ok := aggregateHandlers[obj.GroupVersionKind()]
	if !ok {
		return nil, notFound(configv1alpha1.InterpreterOperationAggregateStatus, obj.GroupVersionKind())
	}
	return handler(obj, items)
}

// eachStatus decodes the status of every item that has one into a fresh T
// and calls fn with it.
func eachStatus[T any](items []configv1alpha1.AggregatedStatusItem, fn func(item configv1alpha1.AggregatedStatusItem, s *T)) error {
	for _, item := range items {
		if item.Status == nil {
			continue
		}
		s := new(T)
		if err := json.Unmarshal(item.Status.Raw, s); err != nil {
			return err
		}
		fn(item, s)
	}
	return nil
}

// observedGeneration returns the generation to report: the template's when
// every item (nil-status ones included) has caught up, else the old one.
func observedGeneration(items []configv1alpha1.AggregatedStatusItem, caughtUp int, template, old int64) int64 {
	if caughtUp == len(items) {
		return template
	}
	return old
}

func aggregateDeployment(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	d := &appsv1.Deployment{}
	if err := fromUnstructured(obj.Object, d); err != nil {
		return nil, err
	}
	sum, caughtUp := appsv1.DeploymentStatus{}, 0
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, m *deploymentMemberStatus) {
		if m.ObservedGeneration >= m.Generation && m.ResourceTemplateGeneration >= d.Generation {
			caughtUp++
		}
		sum.Replicas += m.Replicas
		sum.ReadyReplicas += m.ReadyReplicas
		sum.UpdatedReplicas += m.UpdatedReplicas
		sum.AvailableReplicas += m.AvailableReplicas
		sum.UnavailableReplicas += m.UnavailableReplicas
	})
	if err != nil {
		return nil, err
	}
	sum.ObservedGeneration = observedGeneration(items, caughtUp, d.Generation, d.Status.ObservedGeneration)
	old := &d.Status
	if old.ObservedGeneration == sum.ObservedGeneration && old.Replicas == sum.Replicas &&
		old.ReadyReplicas == sum.ReadyReplicas && old.UpdatedReplicas == sum.UpdatedReplicas &&
		old.AvailableReplicas == sum.AvailableReplicas && old.UnavailableReplicas == sum.UnavailableReplicas {
		return obj, nil
	}
	old.ObservedGeneration, old.Replicas, old.ReadyReplicas = sum.ObservedGeneration, sum.Replicas, sum.ReadyReplicas
	old.UpdatedReplicas, old.AvailableReplicas, old.UnavailableReplicas = sum.UpdatedReplicas, sum.AvailableReplicas, sum.UnavailableReplicas
	return toUnstructured(d)
}

func aggregateReplicaSet(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	rs := &appsv1.ReplicaSet{}
	if err := fromUnstructured(obj.Object, rs); err != nil {
		return nil, err
	}
	sum, caughtUp := appsv1.ReplicaSetStatus{}, 0
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, m *replicaSetMemberStatus) {
		if m.ObservedGeneration >= m.Generation && m.ResourceTemplateGeneration >= rs.Generation {
			caughtUp++
		}
		sum.Replicas += m.Replicas
		sum.ReadyReplicas += m.ReadyReplicas
		sum.AvailableReplicas += m.AvailableReplicas
	})
	if err != nil {
		return nil, err
	}
	sum.ObservedGeneration = observedGeneration(items, caughtUp, rs.Generation, rs.Status.ObservedGeneration)
	old := &rs.Status
	if old.ObservedGeneration == sum.ObservedGeneration && old.Replicas == sum.Replicas &&
		old.ReadyReplicas == sum.ReadyReplicas && old.AvailableReplicas == sum.AvailableReplicas {
		return obj, nil
	}
	old.ObservedGeneration, old.Replicas = sum.ObservedGeneration, sum.Replicas
	old.ReadyReplicas, old.AvailableReplicas = sum.ReadyReplicas, sum.AvailableReplicas
	return toUnstructured(rs)
}

// aggregateStatefulSet compares a member's template generation with the
// member's own generation, as Karmada codes it; members report no
// observedGeneration, so in practice it never advances.
func aggregateStatefulSet(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	sts := &appsv1.StatefulSet{}
	if err := fromUnstructured(obj.Object, sts); err != nil {
		return nil, err
	}
	sum, caughtUp := appsv1.StatefulSetStatus{}, 0
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, m *statefulSetMemberStatus) {
		if m.ObservedGeneration >= m.Generation && m.ResourceTemplateGeneration >= m.Generation {
			caughtUp++
		}
		sum.AvailableReplicas += m.AvailableReplicas
		sum.CurrentReplicas += m.CurrentReplicas
		sum.ReadyReplicas += m.ReadyReplicas
		sum.Replicas += m.Replicas
		sum.UpdatedReplicas += m.UpdatedReplicas
	})
	if err != nil {
		return nil, err
	}
	sum.ObservedGeneration = observedGeneration(items, caughtUp, sts.Generation, sts.Status.ObservedGeneration)
	old := &sts.Status
	if old.ObservedGeneration == sum.ObservedGeneration && old.AvailableReplicas == sum.AvailableReplicas &&
		old.CurrentReplicas == sum.CurrentReplicas && old.ReadyReplicas == sum.ReadyReplicas &&
		old.Replicas == sum.Replicas && old.UpdatedReplicas == sum.UpdatedReplicas {
		return obj, nil
	}
	old.ObservedGeneration, old.AvailableReplicas, old.CurrentReplicas = sum.ObservedGeneration, sum.AvailableReplicas, sum.CurrentReplicas
	old.ReadyReplicas, old.Replicas, old.UpdatedReplicas = sum.ReadyReplicas, sum.Replicas, sum.UpdatedReplicas
	return toUnstructured(sts)
}

// aggregateDaemonSet is unchanged only when the whole old status equals the
// computed one (Karmada compares the structs semantically).
func aggregateDaemonSet(obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	ds := &appsv1.DaemonSet{}
	if err := fromUnstructured(obj.Object, ds); err != nil {
		return nil, err
	}
	sum, caughtUp := appsv1.DaemonSetStatus{}, 0
	err := eachStatus(items, func(_ configv1alpha1.AggregatedStatusItem, m *daemonSetMemberStatus) {
		if m.ObservedGeneration >= m.Generation && m.ResourceTemplateGeneration >= ds.Generation {
			caughtUp++
		}
		sum.CurrentNumberScheduled += m.CurrentNumberScheduled
		sum.DesiredNumberScheduled += m.DesiredNumberScheduled
		sum.NumberAvailable += m.NumberAvailable
		sum.NumberMisscheduled += m.NumberMisscheduled
		sum.NumberReady += m.NumberReady
		sum.UpdatedNumberScheduled += m.UpdatedNumberScheduled
		sum.NumberUnavailable += m.NumberUnavailable
	})
	if err != nil {
		return nil, err
	}
	sum.ObservedGeneration = observedGeneration(items, caughtUp, ds.Generation, ds.Status.ObservedGeneration)
	if equality.Semantic.DeepEqual(ds.Status, sum) {
		return obj, nil
	}
	old := &ds.Status
	old.ObservedGeneration, old.CurrentNumberScheduled, old.DesiredNumberScheduled = sum.ObservedGeneration, sum.CurrentNumberScheduled, sum.DesiredNumberScheduled
	old.NumberAvailable, old.NumberMisscheduled, old.NumberReady = sum.NumberAvailable, sum.NumberMisscheduled, sum.NumberReady
	old.UpdatedNumberScheduled, old.NumberUnavailable = sum.UpdatedNumberScheduled, sum.NumberUnavailable
	return toUnstructured(ds)
}
