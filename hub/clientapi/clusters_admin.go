package clientapi

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// Remove unregisters a cluster: the registry revokes its certificates
// (the agent's stream ends at once: the hub rechecks live streams on every
// agent record change) and deletes its Cluster record, so its replicas are
// scheduled elsewhere. Nothing is deleted in the member cluster.
func (s clusterService) Remove(ctx context.Context, req *hubv1.RemoveRequest) (*hubv1.RemoveResponse, error) {
	reg, err := s.b.registry(ctx, "ClusterService.Remove")
	if err != nil {
		return nil, grpcStatus(err)
	}
	if err := reg.Remove(ctx, req.GetName()); err != nil {
		return nil, grpcStatus(registryError(err))
	}
	s.b.log.Info("cluster removed", "cluster", req.GetName())
	return &hubv1.RemoveResponse{}, nil
}

// Approve binds a cluster name to the key of its refused registration: the
// agent's next Register with that key succeeds, and the old key's
// certificate is refused from now on. The pending key's fingerprint is
// required (ListClusters and GetCluster show it), so that an admin
// approves the key they saw, not whichever registered last.
func (s clusterService) Approve(ctx context.Context, req *hubv1.ApproveRequest) (*hubv1.ApproveResponse, error) {
	reg, err := s.b.registry(ctx, "ClusterService.Approve")
	if err != nil {
		return nil, grpcStatus(err)
	}
	a, err := reg.Approve(ctx, req.GetName(), req.GetKeyFingerprint())
	if err != nil {
		return nil, grpcStatus(registryError(err))
	}
	s.b.log.Info("cluster key approved", "cluster", req.GetName(), "key", a.KeyFingerprint)
	view := &hubv1.Cluster{Name: req.GetName(), State: hubv1.ClusterState_CLUSTER_STATE_PENDING}
	if c, _, err := s.b.storedCluster(ctx, req.GetName()); err == nil {
		view = s.b.clusterView(c, time.Now())
	} else if !errors.Is(err, ErrNotFound) {
		return nil, grpcStatus(err)
	}
	if !a.NotAfter.IsZero() {
		view.CertificateNotAfter = timestamppb.New(a.NotAfter)
	}
	return &hubv1.ApproveResponse{Cluster: view}, nil
}

// RejectKey discards a cluster's pending key: a pending key is never
// replaced by another registration, so one the admin does not want must be
// rejected before another can be recorded.
func (s clusterService) RejectKey(ctx context.Context, req *hubv1.RejectKeyRequest) (*hubv1.RejectKeyResponse, error) {
	reg, err := s.b.registry(ctx, "ClusterService.RejectKey")
	if err != nil {
		return nil, grpcStatus(err)
	}
	if _, err := reg.Reject(ctx, req.GetName(), req.GetKeyFingerprint()); err != nil {
		return nil, grpcStatus(registryError(err))
	}
	s.b.log.Info("cluster pending key rejected", "cluster", req.GetName(), "key", req.GetKeyFingerprint())
	return &hubv1.RejectKeyResponse{}, nil
}

// withPendingKeys sets the pending key of every view whose cluster has a
// key awaiting approval (none without a registry).
func (b *backend) withPendingKeys(ctx context.Context, views ...*hubv1.Cluster) error {
	if b.cfg.Registry == nil || len(views) == 0 {
		return nil
	}
	pending, err := b.cfg.Registry.PendingKeys(ctx)
	if err != nil {
		return err
	}
	for _, v := range views {
		v.PendingKeyFingerprint = pending[v.GetName()]
	}
	return nil
}
