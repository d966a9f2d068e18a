package membership

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/hub/store"
)

// modelsRelistBackoff is how long Models waits before listing the cluster
// records again after a store failure other than a compaction.
const modelsRelistBackoff = 2 * time.Second

// Models follows the resource models (spec.resourceModels) of every
// cluster record, for the agent streams: an agent grades its nodes by its
// cluster's models and reports how many fall in each grade
// (allocatableModelings), which the scheduler's general estimator uses
// with the models, as Karmada's does. Every hub replica runs one, since
// any replica may hold a cluster's stream.
type Models struct {
	store *store.Store
	log   hclog.Logger

	mu sync.Mutex // guards the fields below
	// models holds each cluster's models, sorted by grade; absent: none.
	models map[string][]*agentv1.ResourceModel
	// changed is closed, and replaced, whenever a cluster's models change,
	// or once the records are first loaded.
	changed chan struct{}
}

// NewModels returns a follower of the cluster records in st.
func NewModels(st *store.Store, logger hclog.Logger) *Models {
	return &Models{store: st, log: logger.Named("cluster_models"), models: map[string][]*agentv1.ResourceModel{}, changed: make(chan struct{})}
}

// ResourceModels returns cluster's models (nil for none, or before the
// records are loaded) and a channel closed once they may have changed.
func (m *Models) ResourceModels(cluster string) ([]*agentv1.ResourceModel, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.models[cluster], m.changed
}

// Run lists and watches the cluster records until ctx ends, then returns
// nil; it lists again after a compaction or a store failure.
func (m *Models) Run(ctx context.Context) error {
	return store.Follow(ctx, m.log, modelsRelistBackoff, m.session)
}

func (m *Models) session(ctx context.Context) error {
	kvs, rev, err := m.store.List(ctx, store.ClustersPrefix)
	if err != nil {
		return err
	}
	all := make(map[string][]*agentv1.ResourceModel, len(kvs))
	for _, kv := range kvs {
		all[strings.TrimPrefix(kv.Key, store.ClustersPrefix)] = m.decode(kv)
	}
	m.replace(all)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev := range m.store.Watch(wctx, store.ClustersPrefix, rev+1) {
		if ev.Err != nil {
			return ev.Err
		}
		name := strings.TrimPrefix(ev.KV.Key, store.ClustersPrefix)
		var models []*agentv1.ResourceModel
		if ev.Type == store.EventPut {
			models = m.decode(ev.KV)
		}
		m.set(name, models)
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("watch %s: closed", store.ClustersPrefix)
}

// decode reads a record's models; an unreadable record has none (and is
// logged: the scheduler cannot read it either).
func (m *Models) decode(kv store.KV) []*agentv1.ResourceModel {
	var c clusterv1alpha1.Cluster
	if err := json.Unmarshal(kv.Value, &c); err != nil {
		m.log.Warn("cluster record unreadable; its agent is sent no resource models", "key", kv.Key, "error", err)
		return nil
	}
	return ToAgent(c.Spec.ResourceModels)
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
