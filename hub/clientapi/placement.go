package clientapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/roles"
	"github.com/tetherproj/tether/hub/store"
)

// Placements implements hubv1.PlacementServiceServer.
type Placements struct {
	hubv1.UnimplementedPlacementServiceServer
	b *backend
}

// GetPlacement returns where a template runs and why other clusters were
// not chosen.
func (p *Placements) GetPlacement(ctx context.Context, req *hubv1.GetPlacementRequest) (*hubv1.GetPlacementResponse, error) {
	c, err := p.b.authorize(ctx)
	if err != nil {
		return nil, grpcStatus(err)
	}
	key, err := templateKey(req.GetTemplate())
	if err != nil {
		return nil, grpcStatus(err)
	}
	if err := c.may(roles.Read, key.Kind, key.Namespace); err != nil {
		return nil, grpcStatus(err)
	}
	pl, err := p.b.placement(ctx, key, req.GetTemplate())
	if err != nil {
		return nil, grpcStatus(err)
	}
	return &hubv1.GetPlacementResponse{Placement: pl}, nil
}

// templateKey resolves a template reference; Tether's own kinds have no
// placement.
func templateKey(ref *hubv1.ObjectRef) (store.ObjectRef, error) {
	key, kr, err := resolveRef(ref)
	if err != nil {
		return key, err
	}
	if kr.own {
		return key, fmt.Errorf("%w: %s is not a resource template; only templates have a placement", ErrInvalid, ref.GetKind())
	}
	return key, nil
}

// placement reads the template and its binding, now, and computes their
// placement (placementOf).
func (b *backend) placement(ctx context.Context, key store.ObjectRef, ref *hubv1.ObjectRef) (*hubv1.Placement, error) {
	tkv, err := b.st.Get(ctx, store.ObjectKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, describe(ref))
	}
	if err != nil {
		return nil, err
	}
	bkv, err := b.st.Get(ctx, store.BindingKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return b.placementOf(ctx, key, tkv, nil, b.storedClusters)
	}
	if err != nil {
		return nil, err
	}
	return b.placementOf(ctx, key, tkv, &bkv, b.storedClusters)
}

// placementOf is the placement of the template key stored as tkv with the
// binding bkv (nil: none): the one computation behind GetPlacement,
// WatchPlacement and WatchPlacements. The clusters come from the binding
// (the scheduler's last result). The rejections are the ones the
// scheduling loop recorded with that result (placement.Rejections), so
// that they explain the decision actually made, liveness taints included.
// A binding scheduled before the loop recorded them (or by another
// scheduler) gets them recomputed: the scheduler runs again, purely, on the
// binding's input (place.BuildInput) and the scheduling loop's view of
// the clusters (members) read from clusters.
func (b *backend) placementOf(ctx context.Context, key store.ObjectRef, tkv store.KV, bkv *store.KV, clusters clusterSource) (*hubv1.Placement, error) {
	pl := &hubv1.Placement{Template: templateRef(key, tkv.Value), Revision: tkv.Revision}
	if bkv == nil {
		pl.Message = "no propagation policy matches the template"
		return pl, nil
	}
	pl.Revision = max(pl.Revision, bkv.Revision)
	var rb workv1alpha1.ResourceBinding
	if err := json.Unmarshal(bkv.Value, &rb); err != nil {
		return nil, fmt.Errorf("decode binding %s: %w", bkv.Key, err)
	}
	if err := b.fillFromBinding(ctx, pl, &rb, key, clusters); err != nil {
		return nil, err
	}
	return pl, nil
}

// templateRef names the template key stored as value, with its
// apiVersion.
func templateRef(key store.ObjectRef, value []byte) *hubv1.ObjectRef {
	var tm struct {
		APIVersion string `json:"apiVersion"`
	}
	_ = json.Unmarshal(value, &tm)
	return &hubv1.ObjectRef{ApiVersion: tm.APIVersion, Kind: key.Kind, Namespace: key.Namespace, Name: key.Name}
}

func (b *backend) fillFromBinding(ctx context.Context, pl *hubv1.Placement, rb *workv1alpha1.ResourceBinding, key store.ObjectRef, clusters clusterSource) error {
	kind := workv1alpha1.KindResourceBinding
	if key.Namespace == "" {
		kind = workv1alpha1.KindClusterResourceBinding
	}
	pl.Binding = &hubv1.ObjectRef{ApiVersion: workv1alpha1.GroupVersion.String(), Kind: kind, Namespace: rb.Namespace, Name: rb.Name}
	pl.Policy = policyRef(rb)
	var chosen []string
	for _, tc := range rb.Spec.Clusters {
		pl.Clusters = append(pl.Clusters, &hubv1.ClusterPlacement{Cluster: tc.Name, Replicas: tc.Replicas})
		chosen = append(chosen, tc.Name)
	}
	pl.Scheduled, pl.Message = scheduledState(rb)
	if t := rb.Status.LastScheduledTime; t != nil {
		pl.ScheduleTime = timestamppb.New(t.Time)
	}
	if recorded, ok := b.recordedRejections(rb); ok {
		pl.Rejections = recorded
		return nil
	}
	if rb.Spec.Placement == nil {
		return nil // an attached dependency: the scheduler does not place it
	}
	cs, err := clusters(ctx)
	if err != nil {
		return err
	}
	in := place.BuildInput(rb, b.members(cs, true, time.Now()), b.cfg.Scheduling)
	pl.Rejections = rejections(in, chosen)
	return nil
}

// clusterSource reads the registered clusters: storedClusters, or a
// WatchPlacements stream's clusterView.
type clusterSource func(context.Context) ([]clusterv1alpha1.Cluster, error)

// policyRef is the policy a binding's claim names, nil for none.
func policyRef(rb *workv1alpha1.ResourceBinding) *hubv1.ObjectRef {
	c := bind.ClaimOf(rb)
	if c == nil {
		return nil
	}
	r := &hubv1.ObjectRef{ApiVersion: policyv1alpha1.GroupVersion.String(), Kind: policyv1alpha1.KindPropagationPolicy,
		Namespace: c.Policy.Namespace, Name: c.Policy.Name}
	if c.Policy.Cluster {
		r.Kind, r.Namespace = policyv1alpha1.KindClusterPropagationPolicy, ""
	}
	return r
}

// scheduledState reads the scheduler's Scheduled condition; without one, a
// binding is scheduled once it has a schedule time.
func scheduledState(rb *workv1alpha1.ResourceBinding) (bool, string) {
	if c := apimeta.FindStatusCondition(rb.Status.Conditions, placement.ConditionScheduled); c != nil {
		if c.Status == "True" {
			return true, ""
		}
		return false, c.Message
	}
	if rb.Status.LastScheduledTime != nil {
		return true, ""
	}
	return false, "waiting for the scheduler"
}

// recordedRejections converts the rejections the scheduling loop recorded
// on a binding; ok is false when it recorded none. The loop writes the
// annotation with every decision that rejected a cluster and removes it
// otherwise, so a binding it scheduled without rejections looks the same
// as one it never scheduled: both are recomputed, which finds nothing for
// the former. An unreadable annotation is logged and recomputed too.
func (b *backend) recordedRejections(rb *workv1alpha1.ResourceBinding) ([]*hubv1.ClusterRejection, bool) {
	rs, err := placement.Rejections(rb)
	if err != nil {
		b.log.Warn("recorded rejections unreadable; recomputing", "namespace", rb.Namespace, "binding", rb.Name, "error", err)
		return nil, false
	}
	if rs == nil {
		return nil, false
	}
	out := make([]*hubv1.ClusterRejection, 0, len(rs))
	for _, r := range rs {
		out = append(out, &hubv1.ClusterRejection{Cluster: r.Cluster, Reasons: r.Reasons})
	}
	return out, true
}
