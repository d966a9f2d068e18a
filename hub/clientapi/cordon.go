package clientapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/membership"
	"github.com/tetherproj/tether/hub/store"
)

// TaintCordoned is the key of the NoSchedule taint Cordon puts on a
// cluster, the one hub/scheduler's documentation names: new placements
// avoid the cluster, what runs there stays. New clusters carry it from
// their registration when the hub runs with --new-clusters-cordoned.
const TaintCordoned = membership.TaintCordoned

// maxEditAttempts bounds the read-modify-write retries of a change to a
// cluster record (taints, labels, annotations) that loses a race with
// another writer of the record, such as hub/membership recording API
// enablements.
const maxEditAttempts = 5

// Cordon adds the cordon taint; idempotent.
func (s clusterService) Cordon(ctx context.Context, req *hubv1.CordonRequest) (*hubv1.CordonResponse, error) {
	c, err := s.change(ctx, req.GetName(), &hubv1.TaintRequest{
		Add: []*hubv1.Taint{{Key: TaintCordoned, Effect: hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE}}})
	return &hubv1.CordonResponse{Cluster: c}, err
}

// Uncordon removes the cordon taint; idempotent.
func (s clusterService) Uncordon(ctx context.Context, req *hubv1.UncordonRequest) (*hubv1.UncordonResponse, error) {
	c, err := s.change(ctx, req.GetName(), &hubv1.TaintRequest{
		Remove: []*hubv1.Taint{{Key: TaintCordoned, Effect: hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE}}})
	return &hubv1.UncordonResponse{Cluster: c}, err
}

// Taint removes, then adds, taints.
func (s clusterService) Taint(ctx context.Context, req *hubv1.TaintRequest) (*hubv1.TaintResponse, error) {
	c, err := s.change(ctx, req.GetName(), req)
	return &hubv1.TaintResponse{Cluster: c}, err
}

// change applies a taint request to the stored cluster as an admin, and
// returns the cluster's view afterwards; the error is a gRPC status.
func (s clusterService) change(ctx context.Context, name string, req *hubv1.TaintRequest) (*hubv1.Cluster, error) {
	if _, err := s.b.authorize(ctx); err != nil {
		return nil, grpcStatus(err)
	}
	c, err := s.b.retaint(ctx, name, req)
	if err != nil {
		return nil, grpcStatus(fmt.Errorf("taint cluster %s: %w", name, err))
	}
	return s.b.clusterView(c, time.Now()), nil
}

// retaint changes the cluster's taints. Nothing is written when they do
// not change.
func (b *backend) retaint(ctx context.Context, name string, req *hubv1.TaintRequest) (*clusterv1alpha1.Cluster, error) {
	add, err := taintsOf(req.GetAdd())
	if err != nil {
		return nil, err
	}
	return b.editCluster(ctx, name, 0, func(c *clusterv1alpha1.Cluster) (bool, error) {
		next := applyTaints(c.Spec.Taints, req.GetRemove(), add, metav1.Now())
		if slices.EqualFunc(next, c.Spec.Taints, sameTaint) {
			return false, nil
		}
		c.Spec.Taints = next
		return true, nil
	})
}

// editCluster is a conditional read-modify-write of the cluster record:
// edit changes the record read and says whether it did; the write is
// conditional on the revision read and retried (with a fresh read) when
// another writer got in between, up to maxEditAttempts. With rev not 0 the
// caller read the record at rev: a record at another revision is
// ErrRevisionMismatch and nothing is retried. The record returned carries
// its revision in metadata.resourceVersion.
func (b *backend) editCluster(ctx context.Context, name string, rev int64, edit func(*clusterv1alpha1.Cluster) (bool, error)) (*clusterv1alpha1.Cluster, error) {
	for attempt := 1; ; attempt++ {
		c, cur, err := b.storedCluster(ctx, name)
		if err != nil {
			return nil, err
		}
		if rev != 0 && cur != rev {
			return nil, fmt.Errorf("%w: cluster %s is at revision %d, not %d: read it again", ErrRevisionMismatch, name, cur, rev)
		}
		changed, err := edit(c)
		if err != nil || !changed {
			return c, err
		}
		c.ResourceVersion = ""
		data, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		next, err := b.st.Update(ctx, store.ClusterKey(name), data, cur)
		if err == nil {
			c.ResourceVersion = strconv.FormatInt(next, 10)
			return c, nil
		}
		if !errors.Is(err, store.ErrConflict) || rev != 0 || attempt == maxEditAttempts {
			return nil, err
		}
	}
}

// taintsOf converts and validates the taints to add.
func taintsOf(in []*hubv1.Taint) ([]corev1.Taint, error) {
	out := make([]corev1.Taint, 0, len(in))
	for _, t := range in {
		out = append(out, corev1.Taint{Key: t.GetKey(), Value: t.GetValue(), Effect: effectFromProto(t.GetEffect())})
	}
	if errs := clusterv1alpha1.ValidateTaints(out, field.NewPath("add")); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, errs.ToAggregate())
	}
	return out, nil
}

// applyTaints is the pure part of a taint change: removals (by key and,
// when set, effect) and then additions (replacing a taint of the same key
// and effect). An addition equal to the existing taint keeps its
// timeAdded; a new or changed one gets now.
func applyTaints(cur []corev1.Taint, remove []*hubv1.Taint, add []corev1.Taint, now metav1.Time) []corev1.Taint {
	out := slices.DeleteFunc(slices.Clone(cur), func(t corev1.Taint) bool {
		return slices.ContainsFunc(remove, func(r *hubv1.Taint) bool {
			return r.GetKey() == t.Key && (r.GetEffect() == hubv1.TaintEffect_TAINT_EFFECT_UNSPECIFIED || effectFromProto(r.GetEffect()) == t.Effect)
		})
	})
	for _, a := range add {
		i := slices.IndexFunc(out, func(t corev1.Taint) bool { return t.Key == a.Key && t.Effect == a.Effect })
		switch {
		case i < 0:
			a.TimeAdded = &now
			out = append(out, a)
		case out[i].Value != a.Value:
			a.TimeAdded = &now
			out[i] = a
		}
	}
	return out
}

func sameTaint(a, b corev1.Taint) bool {
	return a.Key == b.Key && a.Value == b.Value && a.Effect == b.Effect
}

// cordoned reports whether the cordon taint is in force.
func cordoned(taints []corev1.Taint) bool {
	return slices.ContainsFunc(taints, func(t corev1.Taint) bool {
		return t.Key == TaintCordoned && t.Effect == corev1.TaintEffectNoSchedule
	})
}

func effectFromProto(e hubv1.TaintEffect) corev1.TaintEffect {
	switch e {
	case hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE:
		return corev1.TaintEffectNoSchedule
	case hubv1.TaintEffect_TAINT_EFFECT_PREFER_NO_SCHEDULE:
		return corev1.TaintEffectPreferNoSchedule
	case hubv1.TaintEffect_TAINT_EFFECT_NO_EXECUTE:
		return corev1.TaintEffectNoExecute
	}
	return ""
}

func effectToProto(e corev1.TaintEffect) hubv1.TaintEffect {
	switch e {
	case corev1.TaintEffectNoSchedule:
		return hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE
	case corev1.TaintEffectPreferNoSchedule:
		return hubv1.TaintEffect_TAINT_EFFECT_PREFER_NO_SCHEDULE
	case corev1.TaintEffectNoExecute:
		return hubv1.TaintEffect_TAINT_EFFECT_NO_EXECUTE
	}
	return hubv1.TaintEffect_TAINT_EFFECT_UNSPECIFIED
}
