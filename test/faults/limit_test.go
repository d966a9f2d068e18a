package faults_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// worksLimit is the hub's --max-works-per-cluster in overMaxWorks: the
// examples take baselineWorks per cluster (nginx and its ConfigMap), so
// worksLimit-baselineWorks of the extras fit and the others do not.
const (
	worksLimit    = 4
	baselineWorks = 2
	extraWorks    = 5
)

// limitReason is how the scheduler says a cluster is full.
const limitReason = "limit of works per cluster"

// extras are extraWorks ConfigMaps placed in every cluster by one policy.
func extras() []byte {
	var b strings.Builder
	for i := range extraWorks {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: faults-extra-%d, labels: {faults: extra}}\ndata: {i: \"%d\"}\n---\n", i, i)
	}
	b.WriteString(`apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: faults-extra}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {faults: extra}}}]
  placement: {replicaScheduling: {replicaSchedulingType: Duplicated}}
`)
	return []byte(b.String())
}

// overMaxWorks pushes every cluster past the hub's works limit. The limit
// is enforced where placement is decided: the extras that do not fit are
// not placed, and their bindings say why; no cluster loses its stream or
// its lease (Ready throughout, a lease period and more), and nothing
// placed before is deleted.
func overMaxWorks(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := x.begin(t.Name())
	if _, err := x.client.Apply(ctx, extras()); err != nil {
		t.Fatalf("apply the extra ConfigMaps: %v", err)
	}
	r.hold(settle)
	if len(r.unknownAt) > 0 {
		t.Errorf("clusters not Ready after being pushed over the works limit: %v; want every cluster Ready throughout", r.unknownAt)
	}
	placed, limited := x.extraPlacements(ctx)
	for cluster, n := range placed {
		if n > worksLimit-baselineWorks {
			t.Errorf("cluster %s got %d extra works; the limit %d leaves room for %d", cluster, n, worksLimit, worksLimit-baselineWorks)
		}
	}
	if limited == 0 {
		t.Errorf("no extra ConfigMap's placement says %q; want the %d that do not fit to say so", limitReason, extraWorks-(worksLimit-baselineWorks))
	}
	t.Logf("extras placed per cluster: %v; extras rejected for the limit: %d", placed, limited)
	r.healed()
	r.converge()
	r.finish()
}

// extraPlacements counts the extras placed per cluster, and the extras
// whose placement rejects a cluster for the works limit.
func (x *fixture) extraPlacements(ctx context.Context) (placed map[string]int, limited int) {
	placed = map[string]int{}
	for i := range extraWorks {
		ref := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: fmt.Sprintf("faults-extra-%d", i)}
		p, err := x.client.GetPlacement(ctx, ref)
		if err != nil {
			x.t.Fatal(err)
		}
		for _, c := range p.GetClusters() {
			placed[c.GetCluster()]++
		}
		if rejectedForLimit(p) {
			limited++
		}
	}
	return placed, limited
}

func rejectedForLimit(p *hubv1.Placement) bool {
	if strings.Contains(p.GetMessage(), limitReason) {
		return true
	}
	for _, rj := range p.GetRejections() {
		for _, reason := range rj.GetReasons() {
			if strings.Contains(reason, limitReason) {
				return true
			}
		}
	}
	return false
}
