package clientapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/store"
)

// clusterService implements hubv1.ClusterServiceServer: the reads here,
// Cordon, Uncordon and Taint in cordon.go, Label and Annotate in
// clustermeta.go, SetResourceModels in clustermodels.go, Remove and Approve in clusters_admin.go.
type clusterService struct {
	hubv1.UnimplementedClusterServiceServer
	b *backend
}

// ListClusters returns the stored clusters with their liveness, by name.
func (s clusterService) ListClusters(ctx context.Context, req *hubv1.ListClustersRequest) (*hubv1.ListClustersResponse, error) {
	if _, err := s.b.authorize(ctx); err != nil {
		return nil, grpcStatus(err)
	}
	sel, err := labels.Parse(req.GetLabelSelector())
	if err != nil {
		return nil, grpcStatus(fmt.Errorf("%w: label selector %q: %v", ErrInvalid, req.GetLabelSelector(), err))
	}
	cs, err := s.b.storedClusters(ctx) // sorted by key, so by name
	if err != nil {
		return nil, grpcStatus(err)
	}
	now := time.Now()
	resp := &hubv1.ListClustersResponse{}
	for i := range cs {
		if sel.Matches(labels.Set(cs[i].Labels)) {
			v := s.b.clusterView(&cs[i], now)
			if !req.GetWithObjects() {
				v.ObjectJson = nil
			}
			resp.Clusters = append(resp.Clusters, v)
		}
	}
	if err := s.b.withPendingKeys(ctx, resp.Clusters...); err != nil {
		return nil, grpcStatus(err)
	}
	return resp, nil
}

// GetCluster returns one cluster and the APIs it serves.
func (s clusterService) GetCluster(ctx context.Context, req *hubv1.GetClusterRequest) (*hubv1.GetClusterResponse, error) {
	if _, err := s.b.authorize(ctx); err != nil {
		return nil, grpcStatus(err)
	}
	c, _, err := s.b.storedCluster(ctx, req.GetName())
	if err != nil {
		return nil, grpcStatus(err)
	}
	lease, _ := s.b.lease(c.Name)
	view := s.b.clusterView(c, time.Now())
	if err := s.b.withPendingKeys(ctx, view); err != nil {
		return nil, grpcStatus(err)
	}
	return &hubv1.GetClusterResponse{Cluster: view, ApiEnablements: apiEnablementsOf(c, lease.Heartbeat)}, nil
}

// storedCluster reads the record at store.ClusterKey(name) and its
// revision, which it also sets as the record's metadata.resourceVersion.
func (b *backend) storedCluster(ctx context.Context, name string) (*clusterv1alpha1.Cluster, int64, error) {
	if name == "" {
		return nil, 0, fmt.Errorf("%w: cluster name is required", ErrInvalid)
	}
	kv, err := b.st.Get(ctx, store.ClusterKey(name))
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, fmt.Errorf("%w: cluster %s is not registered", ErrNotFound, name)
	}
	if err != nil {
		return nil, 0, err
	}
	c := &clusterv1alpha1.Cluster{}
	if err := json.Unmarshal(kv.Value, c); err != nil {
		return nil, 0, fmt.Errorf("decode %s: %w", kv.Key, err)
	}
	c.ResourceVersion = strconv.FormatInt(kv.Revision, 10)
	return c, kv.Revision, nil
}

// lease is the cluster's lease in this hub replica, if any.
func (b *backend) lease(name string) (lease.Lease, bool) {
	if b.cfg.Leases == nil {
		return lease.Lease{}, false
	}
	return b.cfg.Leases.Get(name)
}

// clusterView is what clients see of a cluster: the stored record (labels,
// taints, topology, what was last stored of its status) overlaid with the
// lease's last heartbeat, which is newer when there is one.
func (b *backend) clusterView(c *clusterv1alpha1.Cluster, now time.Time) *hubv1.Cluster {
	out := &hubv1.Cluster{
		Name:              c.Name,
		State:             hubv1.ClusterState_CLUSTER_STATE_UNKNOWN,
		Labels:            maps.Clone(c.Labels),
		Annotations:       maps.Clone(c.Annotations),
		Cordoned:          cordoned(c.Spec.Taints),
		Provider:          c.Spec.Provider,
		Region:            c.Spec.Region,
		Zones:             c.Spec.Zones,
		KubernetesVersion: c.Status.KubernetesVersion,
		Capacity:          capacityOf(c.Status.ResourceSummary),
		Conditions:        storedConditions(c),
	}
	if !c.CreationTimestamp.IsZero() {
		out.RegisterTime = timestamppb.New(c.CreationTimestamp.Time)
	}
	for _, t := range c.Spec.Taints {
		pt := &hubv1.Taint{Key: t.Key, Value: t.Value, Effect: effectToProto(t.Effect)}
		if t.TimeAdded != nil {
			pt.AddTime = timestamppb.New(t.TimeAdded.Time)
		}
		out.Taints = append(out.Taints, pt)
	}
	out.ResourceVersion, _ = strconv.ParseInt(c.ResourceVersion, 10, 64)
	if len(c.Spec.ResourceModels) > 0 {
		out.ResourceModels = modelsView(c.Spec.ResourceModels)
	}
	l, ok := b.lease(c.Name)
	if ok {
		withLease(out, l, now)
	}
	out.ObjectJson = clusterObject(c, l.Heartbeat)
	return out
}

// withLease overlays a lease on a cluster's view.
func withLease(out *hubv1.Cluster, l lease.Lease, now time.Time) {
	switch l.State {
	case lease.StateReady:
		out.State = hubv1.ClusterState_CLUSTER_STATE_READY
	case lease.StateNotReady:
		out.State = hubv1.ClusterState_CLUSTER_STATE_NOT_READY
	}
	out.Connected = l.State != lease.StateUnknown
	out.LastHeartbeatTime = timestamppb.New(l.LastHeartbeat)
	out.LeaseAge = durationpb.New(now.Sub(l.LastHeartbeat).Truncate(time.Millisecond))
	hb := l.Heartbeat
	if hb == nil {
		return
	}
	out.AgentVersion = hb.GetAgentVersion()
	if v := hb.GetKubernetesVersion(); v != "" {
		out.KubernetesVersion = v
	}
	if rs := hb.GetResourceSummary(); rs != nil {
		out.Capacity = &hubv1.Capacity{Allocatable: rs.GetAllocatable(), Allocated: rs.GetAllocated(), Allocating: rs.GetAllocating()}
	}
	if len(hb.GetConditions()) > 0 {
		out.Conditions = heartbeatConditions(hb.GetConditions())
	}
	if topo := hb.GetTopology(); topo != nil && out.Provider == "" && out.Region == "" && len(out.Zones) == 0 {
		out.Provider, out.Region, out.Zones = topo.GetProvider(), topo.GetRegion(), topo.GetZones()
	}
}

func capacityOf(rs *clusterv1alpha1.ResourceSummary) *hubv1.Capacity {
	if rs == nil {
		return nil
	}
	c := &hubv1.Capacity{Allocatable: map[string]string{}, Allocated: map[string]string{}, Allocating: map[string]string{}}
	for k, q := range rs.Allocatable {
		c.Allocatable[string(k)] = q.String()
	}
	for k, q := range rs.Allocated {
		c.Allocated[string(k)] = q.String()
	}
	for k, q := range rs.Allocating {
		c.Allocating[string(k)] = q.String()
	}
	return c
}

func storedConditions(c *clusterv1alpha1.Cluster) []*hubv1.ClusterCondition {
	var out []*hubv1.ClusterCondition
	for _, cond := range c.Status.Conditions {
		out = append(out, &hubv1.ClusterCondition{Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason,
			Message: cond.Message, LastTransitionTime: timestamppb.New(cond.LastTransitionTime.Time)})
	}
	return out
}

func heartbeatConditions(in []*agentv1.Condition) []*hubv1.ClusterCondition {
	out := make([]*hubv1.ClusterCondition, 0, len(in))
	for _, c := range in {
		status := "Unknown"
		switch c.GetStatus() {
		case agentv1.ConditionStatus_CONDITION_STATUS_TRUE:
			status = "True"
		case agentv1.ConditionStatus_CONDITION_STATUS_FALSE:
			status = "False"
		}
		out = append(out, &hubv1.ClusterCondition{Type: c.GetType(), Status: status, Reason: c.GetReason(),
			Message: c.GetMessage(), LastTransitionTime: c.GetLastTransitionTime()})
	}
	return out
}

// apiEnablementsOf is what the cluster serves: the last heartbeat's list,
// else the stored one.
func apiEnablementsOf(c *clusterv1alpha1.Cluster, hb *agentv1.Heartbeat) []*hubv1.APIGroupVersion {
	var out []*hubv1.APIGroupVersion
	if hb != nil && len(hb.GetApiEnablements()) > 0 {
		for _, e := range hb.GetApiEnablements() {
			gv := &hubv1.APIGroupVersion{GroupVersion: e.GetGroupVersion()}
			for _, r := range e.GetResources() {
				gv.Kinds = append(gv.Kinds, r.GetKind())
			}
			out = append(out, gv)
		}
		return out
	}
	for _, e := range c.Status.APIEnablements {
		gv := &hubv1.APIGroupVersion{GroupVersion: e.GroupVersion}
		for _, r := range e.Resources {
			gv.Kinds = append(gv.Kinds, r.Kind)
		}
		out = append(out, gv)
	}
	return out
}
