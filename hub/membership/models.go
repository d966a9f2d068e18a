package membership

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// Source is the replica's view of the store (*view.View).
type Source interface {
	Each(ctx context.Context, apply func(view.Batch), prefixes ...string) error
}

// Models follows the resource models (spec.resourceModels) of every
// cluster record, for the agent streams: an agent grades its nodes by its
// cluster's models and reports how many fall in each grade
// (allocatableModelings), which the scheduler's general estimator uses
// with the models, as Karmada's does. Every hub replica runs one, since
// any replica may hold a cluster's stream.
type Models struct {
	view Source
	log  hclog.Logger

	mu sync.Mutex // guards the fields below
	// models holds each cluster's models, sorted by grade; absent: none.
	models map[string][]*agentv1.ResourceModel
	// changed is closed, and replaced, whenever a cluster's models change,
	// or once the records are first loaded.
	changed chan struct{}
}

// NewModels returns a follower of the cluster records in v.
func NewModels(v Source, logger hclog.Logger) *Models {
	return &Models{view: v, log: logger.Named("cluster_models"), models: map[string][]*agentv1.ResourceModel{}, changed: make(chan struct{})}
}

// ResourceModels returns cluster's models (nil for none, or before the
// records are loaded) and a channel closed once they may have changed.
func (m *Models) ResourceModels(cluster string) ([]*agentv1.ResourceModel, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.models[cluster], m.changed
}

// Run follows the cluster records in the view until ctx ends, then
// returns nil: a full batch (the view's first list, or a list after its
// watch failed) replaces every cluster's models.
func (m *Models) Run(ctx context.Context) error {
	return m.view.Each(ctx, m.take, store.ClustersPrefix)
}

// take applies one batch of the view: a full one replaces every
// cluster's models, another sets the changed clusters'.
func (m *Models) take(b view.Batch) {
	if b.Full {
		all := make(map[string][]*agentv1.ResourceModel, len(b.Changes))
		for _, c := range b.Changes {
			all[strings.TrimPrefix(c.Key, store.ClustersPrefix)] = m.modelsOf(c.Object)
		}
		m.replace(all)
		return
	}
	for _, c := range b.Changes {
		m.set(strings.TrimPrefix(c.Key, store.ClustersPrefix), m.modelsOf(c.Object))
	}
}

// modelsOf reads a record's models (none when deleted); an unreadable
// record has none (and is logged: the scheduler cannot read it either).
func (m *Models) modelsOf(o *view.Object) []*agentv1.ResourceModel {
	if o == nil {
		return nil
	}
	if o.Err != nil {
		m.log.Warn("cluster record unreadable; its agent is sent no resource models", "key", o.Key, "error", o.Err)
		return nil
	}
	return ToAgent(o.Value.(*clusterv1alpha1.Cluster).Spec.ResourceModels)
}

// replace sets every cluster's models at once and wakes every follower.
func (m *Models) replace(all map[string][]*agentv1.ResourceModel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.models = all
	close(m.changed)
	m.changed = make(chan struct{})
}

// set changes one cluster's models, waking the followers only when they
// differ.
func (m *Models) set(name string, models []*agentv1.ResourceModel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.EqualFunc(m.models[name], models, func(a, b *agentv1.ResourceModel) bool { return proto.Equal(a, b) }) {
		return
	}
	if models == nil {
		delete(m.models, name)
	} else {
		m.models[name] = models
	}
	close(m.changed)
	m.changed = make(chan struct{})
}

// ToAgent converts a Cluster's resource models to the agent protocol's, in
// grade order; nil for none.
func ToAgent(models []clusterv1alpha1.ResourceModel) []*agentv1.ResourceModel {
	if len(models) == 0 {
		return nil
	}
	sorted := slices.Clone(models)
	slices.SortStableFunc(sorted, func(a, b clusterv1alpha1.ResourceModel) int { return int(a.Grade) - int(b.Grade) })
	out := make([]*agentv1.ResourceModel, 0, len(sorted))
	for _, rm := range sorted {
		pm := &agentv1.ResourceModel{Grade: int32(rm.Grade)}
		for _, r := range rm.Ranges {
			pm.Ranges = append(pm.Ranges, &agentv1.ResourceModelRange{Name: string(r.Name), Min: r.Min.String(), Max: r.Max.String()})
		}
		out = append(out, pm)
	}
	return out
}
