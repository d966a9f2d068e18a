package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/lease"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// staticLeases is a fixed lease list (Leases) for benchmarks that drive
// the loop's state by hand.
type staticLeases struct{ leases []lease.Lease }

func (s *staticLeases) List() ([]lease.Lease, uint64) { return s.leases, 1 }
func (s *staticLeases) Wait(ctx context.Context, _ uint64) (uint64, error) {
	<-ctx.Done()
	return 0, ctx.Err()
}
func (s *staticLeases) Duration() time.Duration { return time.Hour }

// readyLease is a Ready lease serving Deployments.
func readyLease(name string) lease.Lease {
	return lease.Lease{Cluster: name, State: lease.StateReady, Since: t0, LastHeartbeat: t0, Heartbeat: &agentv1.Heartbeat{
		Conditions:      []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
		ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"pods": "110"}},
		ApiEnablements:  []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
	}}
}

// clusterEvent is the view's change of a stored cluster with labels.
func clusterEvent(name string, labels map[string]string) view.Change {
	c := clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	return decoded(store.ClusterKey(name), []byte(place.JSONString(c)), 1)
}

// decoded is the view's change of key stored as data at rev, decoded as
// the view decodes it.
func decoded(key string, data []byte, rev int64) view.Change {
	decode := view.Bindings
	if strings.HasPrefix(key, store.ClustersPrefix) {
		decode = view.Clusters
	}
	v, err := decode(key, data)
	return view.Change{Key: key, Object: &view.Object{Key: key, Revision: rev, CreateRevision: 1, Value: v, Err: err}}
}

// BenchmarkJoinExcluded is the loop's work when one cluster joins and
// leaves again (two member refreshes and their processing passes) with
// 1,000 clusters labelled env=prod and 1,000 bindings Duplicated to them
// by a label affinity, scheduled: the joining cluster is labelled
// env=dev, which no binding's affinity admits, so no decision changes
// (the loop writes nothing; it has no store to write to). examined/op is
// how many bindings Step ran on.
func BenchmarkJoinExcluded(b *testing.B) {
	const clusters, bindings = 1000, 1000
	prod := map[string]string{"env": "prod"}
	leases := &staticLeases{}
	var targets []workv1alpha1.TargetCluster
	l := New(nil, nil, leases, Config{Clock: fixedClock{t0}}, hclog.NewNullLogger())
	l.graceUntil = t0
	l.stored, l.bindings, l.works, l.full = map[string]clusterv1alpha1.Cluster{}, map[string]*entry{}, map[string]int{}, map[string]bool{}
	l.dirty, l.rechecks, l.storedGen = map[string]bool{}, map[string]time.Time{}, map[string]uint64{}
	for i := range clusters {
		name := fmt.Sprintf("prod-%04d", i)
		l.applyCluster(clusterEvent(name, prod))
		leases.leases = append(leases.leases, readyLease(name))
		targets = append(targets, tc(name, 1))
	}
	leases.leases = append(leases.leases, readyLease("dev"))
	p := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: prod}}}
	for i := range bindings {
		rb := scheduled(binding(p, 1, targets...))
		rb.Name = fmt.Sprintf("web-%04d", i)
		ref := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: rb.Name}
		l.applyBinding(decoded(store.BindingKey(ref), []byte(place.JSONString(rb)), 1))
	}
	ctx := context.Background()
	l.refreshMembers()
	l.process(ctx)
	if w := l.writes.Load(); w != 0 {
		b.Fatalf("%d bindings written settling; want the prepared decisions to stand", w)
	}
	join, leave := clusterEvent("dev", map[string]string{"env": "dev"}), view.Change{Key: store.ClusterKey("dev")}
	examined := l.examined.Load()
	b.ReportAllocs()
	for b.Loop() {
		l.applyCluster(join)
		l.refreshMembers()
		l.process(ctx)
		l.applyCluster(leave)
		l.refreshMembers()
		l.process(ctx)
	}
	b.ReportMetric(float64(l.examined.Load()-examined)/float64(b.N), "examined/op")
}

// fixedClock is a clock that does not move.
type fixedClock struct{ now time.Time }

func (c fixedClock) Now() time.Time                { return c.now }
func (c fixedClock) At(time.Time) <-chan time.Time { return nil }

// BenchmarkStepDuplicated1000 is Step on a binding Duplicated to 1,000
// Ready clusters, scheduled there and reported healthy by each (as
// hub/aggregate writes it), when nothing changed: the cost of each
// binding a cluster change concerns.
func BenchmarkStepDuplicated1000(b *testing.B) {
	const clusters = 1000
	members := make([]place.Member, clusters)
	var targets []workv1alpha1.TargetCluster
	for i := range members {
		members[i] = ready(fmt.Sprintf("c-%04d", i))
		targets = append(targets, tc(members[i].Cluster.Name, 1))
	}
	rb := scheduled(binding(duplicated(), 1, targets...))
	for _, t := range targets {
		rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, configv1alpha1.AggregatedStatusItem{
			ClusterName: t.Name, Applied: true, Health: configv1alpha1.ResourceHealthy,
			Status: &runtime.RawExtension{Raw: []byte(`{"replicas":1,"readyReplicas":1,"availableReplicas":1,"updatedReplicas":1,"observedGeneration":1}`)},
		})
	}
	index, enc := place.IndexMembers(members), place.JSONString(rb)
	b.ReportAllocs()
	for b.Loop() {
		if out := place.StepIndexed(rb, members, index, t0, place.Options{}); place.JSONString(out.Binding) != enc {
			b.Fatalf("binding changed: %s", place.JSONString(out.Binding))
		}
	}
}
