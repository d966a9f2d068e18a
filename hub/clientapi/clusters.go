package clientapi

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/scheduler"
	"github.com/tetherproj/tether/hub/store"
)

// storedClusters reads every registered cluster, with its revision as
// metadata.resourceVersion. The value at
// store.ClusterKey(name) is the JSON of a cluster.tether.io Cluster (spec:
// topology, taints, resource models; status: API enablements, resource
// summary, conditions).
func (b *backend) storedClusters(ctx context.Context) ([]clusterv1alpha1.Cluster, error) {
	kvs, _, err := b.st.List(ctx, store.ClustersPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]clusterv1alpha1.Cluster, 0, len(kvs))
	for _, kv := range kvs {
		var c clusterv1alpha1.Cluster
		if err := json.Unmarshal(kv.Value, &c); err != nil {
			return nil, fmt.Errorf("decode %s: %w", kv.Key, err)
		}
		c.ResourceVersion = strconv.FormatInt(kv.Revision, 10)
		out = append(out, c)
	}
	return out, nil
}

// schedulerClusters is the scheduler's view of clusters for a workload of
// apiVersion and kind. A cluster that reported no API enablements yet is
// taken to serve every kind (its agent has not said otherwise); one that
// did must list the kind. A cluster with a deletionTimestamp is deleting.
func schedulerClusters(cs []clusterv1alpha1.Cluster, apiVersion, kind string) []scheduler.Cluster {
	out := make([]scheduler.Cluster, 0, len(cs))
	for i := range cs {
		c := &cs[i]
		out = append(out, scheduler.Cluster{
			Name: c.Name, Labels: c.Labels, Taints: c.Spec.Taints,
			Provider: c.Spec.Provider, Region: c.Spec.Region, Zone: c.Spec.Zone, Zones: c.Spec.Zones,
			ResourceSummary: c.Status.ResourceSummary, ResourceModels: c.Spec.ResourceModels,
			APIEnabled: apiEnabled(c, apiVersion, kind), Deleting: c.DeletionTimestamp != nil,
		})
	}
	return out
}

func apiEnabled(c *clusterv1alpha1.Cluster, apiVersion, kind string) bool {
	if len(c.Status.APIEnablements) == 0 {
		return true
	}
	for _, e := range c.Status.APIEnablements {
		if e.GroupVersion != apiVersion {
			continue
		}
		if slices.ContainsFunc(e.Resources, func(r clusterv1alpha1.APIResource) bool { return r.Kind == kind }) {
			return true
		}
	}
	return false
}

// bindingInput is the scheduler input that produced, or would reproduce, a
// binding's result; false for a binding without placement (an attached
// dependency, which the scheduler does not place).
func bindingInput(rb *workv1alpha1.ResourceBinding, cs []clusterv1alpha1.Cluster) (scheduler.Input, bool) {
	if rb.Spec.Placement == nil {
		return scheduler.Input{}, false
	}
	r := rb.Spec.Resource
	in := scheduler.Input{
		Placement: *rb.Spec.Placement,
		Clusters:  schedulerClusters(cs, r.APIVersion, r.Kind),
		Workload: scheduler.Workload{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name,
			UID: string(r.UID), Replicas: rb.Spec.Replicas, Requirements: rb.Spec.ReplicaRequirements,
			Components: len(rb.Spec.Components)},
		Previous: scheduler.Previous{ObservedAffinityName: rb.Status.SchedulerObservedAffinityName},
	}
	for _, tc := range rb.Spec.Clusters {
		in.Previous.Clusters = append(in.Previous.Clusters, scheduler.TargetCluster{Name: tc.Name, Replicas: tc.Replicas})
	}
	for _, t := range rb.Spec.GracefulEvictionTasks {
		in.Previous.EvictingClusters = append(in.Previous.EvictingClusters, t.FromCluster)
	}
	if at, last := rb.Spec.RescheduleTriggeredAt, rb.Status.LastScheduledTime; at != nil && (last == nil || last.Before(at)) {
		in.Previous.RescheduleTriggered = true
	}
	return in, true
}

// rejections runs the scheduler on in and returns why each cluster outside
// chosen was turned down; nothing when scheduling fails for capacity
// (which names no cluster).
func rejections(in scheduler.Input, chosen []string) []*hubv1.ClusterRejection {
	var out []*hubv1.ClusterRejection
	for _, r := range rejectionsOf(scheduler.Schedule(in)) {
		if !slices.Contains(chosen, r.Cluster) {
			out = append(out, r)
		}
	}
	return out
}
