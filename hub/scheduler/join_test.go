package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/store"
)

// putLabelled stores a cluster with labels.
func (e *env) putLabelled(name string, labels map[string]string) int64 {
	c := clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	rev, err := e.st.Put(e.ctx, store.ClusterKey(name), []byte(place.JSONString(c)))
	if err != nil {
		e.t.Fatalf("put cluster %s: %v", name, err)
	}
	return rev
}

// A cluster joining is looked at only by the bindings it concerns: those
// whose affinity admits it (and those naming it). Clusters the prod
// bindings' affinity excludes join without Step running on them, and
// their decisions stay as they were; a cluster they admit still reaches
// them all.
func TestJoinExaminesOnlyConcernedBindings(t *testing.T) {
	e := newEnv(t, time.Hour)
	prod, dev := map[string]string{"env": "prod"}, map[string]string{"env": "dev"}
	e.putLabelled("prod-1", prod)
	e.putLabelled("prod-2", prod)
	e.heartbeat("prod-1", "prod-2")
	affinity := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: prod}}}
	const bindings = 20
	refs := make([]store.ObjectRef, bindings)
	for i := range refs {
		refs[i] = store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: fmt.Sprintf("web-%02d", i)}
		e.putBinding(refs[i], binding(affinity, 1))
	}
	openRef := store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "open"}
	e.putBinding(openRef, binding(duplicated(), 1))
	l, _ := e.start(Config{})
	on := func(n int) func(*workv1alpha1.ResourceBinding) bool {
		return func(b *workv1alpha1.ResourceBinding) bool { return len(b.Spec.Clusters) == n }
	}
	for _, ref := range refs {
		e.waitBinding(ref, "on the 2 prod clusters", on(2))
	}
	e.waitBinding(openRef, "on the 2 clusters", on(2))
	e.settle(l)
	revs := make([]int64, bindings)
	for i, ref := range refs {
		_, revs[i] = e.getBinding(ref)
	}

	examined, passes := l.examined.Load(), l.passes.Load()
	const joining = 10
	for i := range joining {
		name := fmt.Sprintf("dev-%02d", i)
		e.putLabelled(name, dev)
		e.heartbeat(name)
	}
	e.waitBinding(openRef, "on every cluster", on(2+joining))
	e.settle(l)
	// Only the open binding is concerned: Step runs on it at most once a
	// pass.
	if ex, ps := l.examined.Load()-examined, l.passes.Load()-passes; ex > ps {
		t.Errorf("%d clusters the affinity excludes joined: Step ran %d times in %d passes; want at most once a pass (the open binding's)", joining, ex, ps)
	}
	for i, ref := range refs {
		if b, rev := e.getBinding(ref); rev != revs[i] || len(b.Spec.Clusters) != 2 {
			t.Errorf("%s: revision %d → %d, clusters %v; want it left alone", ref.Name, revs[i], rev, names(b.Spec.Clusters))
		}
	}

	e.putLabelled("prod-3", prod)
	e.heartbeat("prod-3")
	for _, ref := range refs {
		e.waitBinding(ref, "on the 3 prod clusters", on(3))
	}
}

// Clusters whose changes wait together are taken in together (one batch
// of the view): one member refresh (and so one processing pass) for all
// of them, not one each.
func TestJoinsWaitingTogetherRefreshOnce(t *testing.T) {
	e := newEnv(t, time.Hour)
	l := New(e.st, e.view, e.leases, Config{Clock: e.clock}, hclog.NewNullLogger())
	sub := e.view.Subscribe(store.BindingsPrefix, store.ClustersPrefix)
	defer sub.Close()
	full, ok := sub.WaitFull(e.ctx)
	if !ok {
		t.Fatal("no full batch")
	}
	if err := l.load(e.ctx, full); err != nil {
		t.Fatalf("load: %v", err)
	}
	const joining = 50
	var last int64
	for i := range joining {
		last = e.putLabelled(fmt.Sprintf("c-%02d", i), nil)
	}
	deadline := time.Now().Add(waitTimeout)
	for e.view.Revision() < last {
		if time.Now().After(deadline) {
			t.Fatalf("view at revision %d; want %d", e.view.Revision(), last)
		}
		time.Sleep(time.Millisecond)
	}
	refreshes := l.refreshes.Load()
	if err := l.takeBatch(e.ctx, inputs{view: sub}); err != nil {
		t.Fatalf("take: %v", err)
	}
	if got := l.refreshes.Load() - refreshes; got != 1 || len(l.members) != joining {
		t.Errorf("%d waiting cluster events: %d refreshes, %d members; want 1 refresh with all %d", joining, got, len(l.members), joining)
	}
}
