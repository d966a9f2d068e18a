package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/pipeline/place"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/internal/interpreter"
)

// web is a Deployment template in namespace prod.
func web() *bind.Template {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "prod"},
		"spec":     map[string]any{"replicas": int64(2)},
	}}
	return &bind.Template{Ref: store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}, Obj: obj, Revision: 20}
}

// onto is a PropagationPolicy of prod selecting every Deployment and
// duplicating it onto cluster, with an explicit priority.
func onto(name, id, cluster string, priority int32) *bind.Policy {
	p := &bind.Policy{Ref: bind.PolicyRef{Namespace: "prod", Name: name}, ID: id, Revision: 10}
	p.Spec.Priority = &priority
	p.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}
	p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}}
	p.Spec.SetDefaults()
	return p
}

// TestTemplate: the chain honours the stored claim (a higher-priority
// policy without preemption does not take the template), places on the
// claiming policy's cluster and renders its work; with no policy the
// template waits and nothing after bind runs.
func TestTemplate(t *testing.T) {
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	deployments := clusterv1alpha1.ClusterStatus{APIEnablements: []clusterv1alpha1.APIEnablement{
		{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}}
	clusters := []clusterv1alpha1.Cluster{{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Status: deployments},
		{ObjectMeta: metav1.ObjectMeta{Name: "m2"}, Status: deployments}}
	members := place.BuildMembers(clusters, nil, now, place.Liveness{GraceUntil: now.Add(time.Hour)})
	first, second := onto("first", "1", "m1", 0), onto("second", "2", "m2", 10)
	claimed := bind.Merge(nil, web(), bind.Want{Policy: first})
	cases := []struct {
		name       string
		stored     *workv1alpha1.ResourceBinding
		pps        []*bind.Policy
		wantPolicy string
		wantWorks  []string
	}{
		{"unclaimed: the best policy", nil, []*bind.Policy{first, second}, "second", []string{"m2"}},
		{"claimed: the claim kept", claimed, []*bind.Policy{first, second}, "first", []string{"m1"}},
		{"no policy: waits", nil, nil, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Bind: bind.Input{Template: web(), Current: bind.CurrentOf(c.stored), PPs: c.pps},
				Stored: c.stored, Members: members, Clusters: clusters, Now: now}
			res := Template(context.Background(), in, interp)
			if res.BindErr != nil || res.RenderErr != nil {
				t.Fatalf("Template: bind error %v, render error %v", res.BindErr, res.RenderErr)
			}
			got := ""
			if res.Policy != nil {
				got = res.Policy.Name
			}
			if got != c.wantPolicy || res.Bound != (c.wantPolicy != "") {
				t.Errorf("Template policy = %q (bound %v); want %q", got, res.Bound, c.wantPolicy)
			}
			var works []string
			for _, w := range res.Works {
				works = append(works, w.Cluster)
			}
			if len(works) != len(c.wantWorks) || (len(works) > 0 && works[0] != c.wantWorks[0]) {
				t.Errorf("Template works on %v; want %v (scheduling: %v)", works, c.wantWorks, res.Placed.Err)
			}
		})
	}
}
