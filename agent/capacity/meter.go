package capacity

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/types/known/timestamppb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/tetherproj/tether/agent/kube"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// DefaultAPIRefresh is how long API enablements are reused before
// discovery is asked again. It is shorter than the hub's heartbeat interval
// (10 s), so every periodic heartbeat carries fresh enablements, as
// Karmada's cluster status does at every sync: a CRD installed in the
// member makes its kind schedulable within one heartbeat, not minutes
// later. The cache only spares bursts of heartbeats (reconnects). With
// aggregated discovery (Kubernetes ≥ 1.30) a refresh is two requests,
// /api and /apis, cheaper than the node and pod lists of every heartbeat.
const DefaultAPIRefresh = 5 * time.Second

// nonTerminal selects the pods that hold resources.
const nonTerminal = "status.phase!=Succeeded,status.phase!=Failed"

// DefaultPodPage is how many pods one request of a heartbeat's pod list
// asks for (client-go's pager uses the same): the agent decodes one page
// at a time and keeps only each pod's node and requests, so a heartbeat's
// memory does not grow with the cluster's pods (a decoded pod is some
// 10 KB).
const DefaultPodPage = 500

// Config configures a Meter.
type Config struct {
	// RESTConfig reaches the member cluster's API server.
	RESTConfig *rest.Config
	// NodeGroupLabel, when set, adds per-group sums by this node label.
	NodeGroupLabel string
	// Topology is reported as is (where the cluster runs).
	Topology *agentv1.Topology
	// APIRefresh: zero means DefaultAPIRefresh.
	APIRefresh time.Duration
	// PodPage is the pods per list request; zero means DefaultPodPage.
	PodPage int64
}

// Meter measures the member cluster. It implements
// agent/hubclient.CapacitySource.
type Meter struct {
	logger hclog.Logger
	kube   *kube.Client
	cfg    Config

	// mu guards apis, apisAt, ready and readySince.
	mu         sync.Mutex
	apis       []*agentv1.APIEnablement
	apisAt     time.Time
	readySince time.Time
	ready      bool
}

// New returns a Meter for the cluster cfg.RESTConfig reaches.
func New(cfg Config, logger hclog.Logger) (*Meter, error) {
	if cfg.RESTConfig == nil {
		return nil, errors.New("capacity: RESTConfig is required")
	}
	kc, err := kube.New(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	if cfg.APIRefresh <= 0 {
		cfg.APIRefresh = DefaultAPIRefresh
	}
	if cfg.PodPage <= 0 {
		cfg.PodPage = DefaultPodPage
	}
	return &Meter{logger: logger.Named("capacity"), kube: kc, cfg: cfg}, nil
}

// Heartbeat returns the cluster's version, resource summary (graded by
// models when any), API enablements, Ready condition and topology.
func (m *Meter) Heartbeat(ctx context.Context, models []*agentv1.ResourceModel) (*agentv1.Heartbeat, error) {
	version, err := m.kube.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("capacity: server version: %w", err)
	}
	summary, err := m.Summary(ctx, models)
	if err != nil {
		return nil, err
	}
	apis, err := m.enablements(ctx)
	if err != nil {
		return nil, err
	}
	return &agentv1.Heartbeat{
		KubernetesVersion: version,
		ResourceSummary:   summary,
		ApiEnablements:    apis,
		Conditions:        []*agentv1.Condition{m.readyCondition(ctx)},
		Topology:          m.cfg.Topology,
	}, nil
}

// Summary lists nodes and non-terminal pods and sums them (see the package
// doc for what counts).
func (m *Meter) Summary(ctx context.Context, models []*agentv1.ResourceModel) (*agentv1.ResourceSummary, error) {
	nodes, err := m.kube.Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("capacity: list nodes: %w", err)
	}
	pods, err := m.podUses(ctx)
	if err != nil {
		return nil, err
	}
	return summarize(nodes.Items, pods, m.cfg.NodeGroupLabel, models), nil
}

// podUses lists the non-terminal pods Config.PodPage at a time, one
// consistent list, one pod decoded at a time, keeping each pod's use.
func (m *Meter) podUses(ctx context.Context) ([]podUse, error) {
	var uses []podUse
	keep := func(p *corev1.Pod) { uses = append(uses, useOf(p)) }
	opts := metav1.ListOptions{FieldSelector: nonTerminal, Limit: m.cfg.PodPage}
	for {
		next, err := m.kube.PodPage(ctx, opts, keep)
		if err != nil {
			return nil, fmt.Errorf("capacity: %w", err)
		}
		if opts.Continue = next; next == "" {
			return uses, nil
		}
	}
}

// enablements returns the served APIs, from discovery at most every
// APIRefresh. Group versions discovery could not read (an aggregated API
// that is down) are left out rather than failing the heartbeat.
func (m *Meter) enablements(ctx context.Context) ([]*agentv1.APIEnablement, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.apis != nil && time.Since(m.apisAt) < m.cfg.APIRefresh {
		return m.apis, nil
	}
	lists, err := m.kube.Discover(ctx)
	var partial *kube.PartialError
	if err != nil && !errors.As(err, &partial) {
		return nil, fmt.Errorf("capacity: discovery: %w", err)
	}
	if err != nil {
		m.logger.Warn("some APIs not discovered", "error", err)
	}
	m.apis, m.apisAt = apiEnablements(lists), time.Now()
	return m.apis, nil
}

// apiEnablements turns discovery lists into the protocol's, sorted, without
// subresources.
func apiEnablements(lists []*metav1.APIResourceList) []*agentv1.APIEnablement {
	var out []*agentv1.APIEnablement
	for _, l := range lists {
		e := &agentv1.APIEnablement{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			e.Resources = append(e.Resources, &agentv1.APIResource{Name: r.Name, Kind: r.Kind, Namespaced: r.Namespaced})
		}
		sort.Slice(e.Resources, func(i, j int) bool { return e.Resources[i].Name < e.Resources[j].Name })
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupVersion < out[j].GroupVersion })
	return out
}

// readyCondition asks the API server's /readyz; its last transition is
// when the answer last changed.
func (m *Meter) readyCondition(ctx context.Context) *agentv1.Condition {
	body, err := m.kube.ReadyzBody(ctx)
	ready := err == nil
	m.mu.Lock()
	if m.readySince.IsZero() || ready != m.ready {
		m.ready, m.readySince = ready, time.Now()
	}
	since := m.readySince
	m.mu.Unlock()
	c := &agentv1.Condition{Type: "Ready", LastTransitionTime: timestamppb.New(since)}
	if ready {
		c.Status, c.Reason, c.Message = agentv1.ConditionStatus_CONDITION_STATUS_TRUE, "ClusterReady", "the member API server is ready"
	} else {
		c.Status, c.Reason, c.Message = agentv1.ConditionStatus_CONDITION_STATUS_FALSE, "ClusterNotReady", fmt.Sprintf("/readyz: %v %s", err, body)
	}
	return c
}
