package clientapi

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"time"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// A cluster's labels and annotations belong to the hub once its record
// exists: the agent's --labels are only the initial value of the record
// (hub/membership creates it and never replaces it), and
// every later change is an admin's, made here. Heartbeats and agent
// restarts do not touch them. A label change reaches the scheduler through
// its watch of the cluster records (hub/scheduler), which reschedules the
// placements whose cluster affinity the change affects.

// metaEdit is one Label or Annotate request: the map it changes, as
// removals then additions.
type metaEdit struct {
	// what is "label" or "annotation", for errors and logs.
	what      string
	set       map[string]string
	remove    []string
	overwrite bool
	// rev, when not 0, is the record revision the change is conditional on.
	rev int64
	// field picks the map the request changes in a record.
	field func(*clusterv1alpha1.Cluster) *map[string]string
	// validate checks the map a change would leave.
	validate func(map[string]string, *field.Path) field.ErrorList
}

// Label sets and removes labels.
func (s clusterService) Label(ctx context.Context, req *hubv1.LabelRequest) (*hubv1.LabelResponse, error) {
	c, err := s.editMeta(ctx, req.GetName(), metaEdit{what: "label", set: req.GetSet(), remove: req.GetRemove(),
		overwrite: req.GetOverwrite(), rev: req.GetResourceVersion(),
		field:    func(c *clusterv1alpha1.Cluster) *map[string]string { return &c.Labels },
		validate: metav1validation.ValidateLabels,
	})
	return &hubv1.LabelResponse{Cluster: c}, err
}

// Annotate sets and removes annotations.
func (s clusterService) Annotate(ctx context.Context, req *hubv1.AnnotateRequest) (*hubv1.AnnotateResponse, error) {
	c, err := s.editMeta(ctx, req.GetName(), metaEdit{what: "annotation", set: req.GetSet(), remove: req.GetRemove(),
		overwrite: req.GetOverwrite(), rev: req.GetResourceVersion(),
		field:    func(c *clusterv1alpha1.Cluster) *map[string]string { return &c.Annotations },
		validate: apivalidation.ValidateAnnotations,
	})
	return &hubv1.AnnotateResponse{Cluster: c}, err
}

// editMeta applies a label or annotation change as an admin and returns
// the cluster's view afterwards; the error is a gRPC status.
func (s clusterService) editMeta(ctx context.Context, name string, e metaEdit) (*hubv1.Cluster, error) {
	if _, err := s.b.authorize(ctx); err != nil {
		return nil, grpcStatus(err)
	}
	c, err := s.b.editCluster(ctx, name, e.rev, func(c *clusterv1alpha1.Cluster) (bool, error) {
		m := e.field(c)
		next, err := applyMeta(*m, e)
		if err != nil || maps.Equal(next, *m) {
			return false, err
		}
		*m = next
		return true, nil
	})
	if err != nil {
		return nil, grpcStatus(fmt.Errorf("%s cluster %s: %w", e.what, name, err))
	}
	s.b.log.Info("cluster "+e.what+"s changed", "cluster", name, "set", len(e.set), "removed", len(e.remove))
	return s.b.clusterView(c, time.Now()), nil
}

// applyMeta is the pure part of a label or annotation change: it returns
// cur with e's removals, then its additions, after checking that no
// addition replaces a different value without overwrite and that the
// result is valid. nil stands for an empty result.
func applyMeta(cur map[string]string, e metaEdit) (map[string]string, error) {
	next := maps.Clone(cur)
	for _, k := range e.remove {
		delete(next, k)
	}
	var refused []string
	for k, v := range e.set {
		if old, ok := next[k]; ok && old != v && !e.overwrite {
			refused = append(refused, fmt.Sprintf("%s=%s (now %s)", k, v, old))
		}
		if next == nil {
			next = map[string]string{}
		}
		next[k] = v
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return nil, fmt.Errorf("%w: %s already set to another value, and overwrite is false: %v",
			ErrPrecondition, e.what, refused)
	}
	if errs := e.validate(next, field.NewPath("metadata", e.what+"s")); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, errs.ToAggregate())
	}
	if len(next) == 0 {
		return nil, nil
	}
	return next, nil
}
