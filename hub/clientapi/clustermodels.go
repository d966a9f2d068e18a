package clientapi

import (
	"context"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// maxResourceModels bounds the grades of one cluster (Karmada's default
// models have 9; the agent grades every node against each).
const maxResourceModels = 64

// maxModelRanges bounds the resources one grade ranges over.
const maxModelRanges = 16

// SetResourceModels replaces a cluster's spec.resourceModels. The agent
// gets them from hub/membership's Models (in Settings), grades its
// nodes and heartbeats the counts; the scheduling loop estimates with
// both, and reschedules on the record's change like any cluster change.
func (s clusterService) SetResourceModels(ctx context.Context, req *hubv1.SetResourceModelsRequest) (*hubv1.SetResourceModelsResponse, error) {
	if _, err := s.b.authorize(ctx); err != nil {
		return nil, grpcStatus(err)
	}
	name := req.GetName()
	models, err := modelsOf(req.GetModels())
	if err != nil {
		return nil, grpcStatus(fmt.Errorf("set resource models of cluster %s: %w", name, err))
	}
	c, err := s.b.editCluster(ctx, name, req.GetResourceVersion(), func(c *clusterv1alpha1.Cluster) (bool, error) {
		if equality.Semantic.DeepEqual(c.Spec.ResourceModels, models) {
			return false, nil
		}
		c.Spec.ResourceModels = models
		return true, nil
	})
	if err != nil {
		return nil, grpcStatus(fmt.Errorf("set resource models of cluster %s: %w", name, err))
	}
	s.b.log.Info("cluster resource models changed", "cluster", name, "grades", len(models))
	return &hubv1.SetResourceModelsResponse{Cluster: s.b.clusterView(c, time.Now())}, nil
}

// modelsOf converts and validates resource models as Karmada's admission
// does, sorted by grade; nil for none.
func modelsOf(in []*hubv1.ResourceModel) ([]clusterv1alpha1.ResourceModel, error) {
	path := field.NewPath("spec", "resourceModels")
	if len(in) > maxResourceModels {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, field.TooMany(path, len(in), maxResourceModels))
	}
	var errs field.ErrorList
	out := make([]clusterv1alpha1.ResourceModel, 0, len(in))
	for i, m := range in {
		p := path.Index(i).Child("ranges")
		if len(m.GetRanges()) > maxModelRanges {
			errs = append(errs, field.TooMany(p, len(m.GetRanges()), maxModelRanges))
			continue
		}
		if m.GetGrade() > math.MaxInt32 {
			errs = append(errs, field.Invalid(path.Index(i).Child("grade"), m.GetGrade(), fmt.Sprintf("must be at most %d", math.MaxInt32)))
		}
		rm := clusterv1alpha1.ResourceModel{Grade: uint(m.GetGrade())}
		for j, r := range m.GetRanges() {
			lo, err1 := resource.ParseQuantity(r.GetMin())
			hi, err2 := resource.ParseQuantity(r.GetMax())
			if err1 != nil {
				errs = append(errs, field.Invalid(p.Index(j).Child("min"), r.GetMin(), err1.Error()))
			}
			if err2 != nil {
				errs = append(errs, field.Invalid(p.Index(j).Child("max"), r.GetMax(), err2.Error()))
			}
			rm.Ranges = append(rm.Ranges, clusterv1alpha1.ResourceModelRange{Name: corev1.ResourceName(r.GetName()), Min: lo, Max: hi})
		}
		out = append(out, rm)
	}
	if len(errs) == 0 {
		errs = clusterv1alpha1.ValidateResourceModels(out, path)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, errs.ToAggregate())
	}
	if len(out) == 0 {
		return nil, nil
	}
	c := clusterv1alpha1.Cluster{Spec: clusterv1alpha1.ClusterSpec{ResourceModels: out}}
	c.SetDefaults() // sorts by grade
	return c.Spec.ResourceModels, nil
}

// modelsView is the client view of resource models.
func modelsView(models []clusterv1alpha1.ResourceModel) []*hubv1.ResourceModel {
	out := make([]*hubv1.ResourceModel, 0, len(models))
	for _, m := range models {
		pm := &hubv1.ResourceModel{Grade: uint32(m.Grade)}
		for _, r := range m.Ranges {
			pm.Ranges = append(pm.Ranges, &hubv1.ResourceModelRange{Name: string(r.Name), Min: r.Min.String(), Max: r.Max.String()})
		}
		out = append(out, pm)
	}
	return out
}
