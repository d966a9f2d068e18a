package clientapi_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/liveness"
	"github.com/tetherproj/tether/hub/placement"
	"github.com/tetherproj/tether/hub/store"
)

// heartbeat is what m1's agent last said.
var heartbeat = &agentv1.Heartbeat{
	AgentVersion: "v0.3.0", KubernetesVersion: "v1.34.4",
	ResourceSummary: &agentv1.ResourceSummary{Allocatable: map[string]string{"cpu": "8", "memory": "16Gi", "pods": "110"}},
	ApiEnablements:  []*agentv1.APIEnablement{{GroupVersion: "apps/v1", Resources: []*agentv1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
	Conditions:      []*agentv1.Condition{{Type: "Ready", Status: agentv1.ConditionStatus_CONDITION_STATUS_TRUE}},
}

// clusterHub is a hub with testdata/clusters.json stored and a lease for m1.
func clusterHub(t *testing.T) *hub {
	t.Helper()
	leases := liveness.New(liveness.Config{})
	leases.Heartbeat("m1", heartbeat)
	h := startHub(t, clientapi.Config{Leases: leases})
	putClusters(t, h)
	return h
}

func TestListAndGetClusters(t *testing.T) {
	h := clusterHub(t)
	c := h.dial(t, viewer)
	list, err := c.clusters.ListClusters(ctx(t), &hubv1.ListClustersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cl := range list.GetClusters() {
		got = append(got, cl.GetName()+" "+strings.TrimPrefix(cl.GetState().String(), "CLUSTER_STATE_"))
	}
	if want := []string{"m1 READY", "m2 UNKNOWN", "m3 UNKNOWN"}; !cmp.Equal(got, want) {
		t.Errorf("ListClusters = %v; want %v", got, want)
	}
	m1 := list.GetClusters()[0]
	if m1.GetAgentVersion() != "v0.3.0" || m1.GetCapacity().GetAllocatable()["cpu"] != "8" || !m1.GetConnected() ||
		m1.GetLeaseAge() == nil || m1.GetLabels()["env"] != "prod" || m1.GetRegion() != "eu" {
		t.Errorf("ListClusters m1 = %v; want the heartbeat's agent version and capacity, a lease age and the stored labels", m1)
	}
	if m3 := list.GetClusters()[2]; len(m3.GetTaints()) != 1 || m3.GetTaints()[0].GetKey() != "dedicated" || m3.GetCordoned() {
		t.Errorf("ListClusters m3 taints = %v, cordoned %v; want dedicated, not cordoned", m3.GetTaints(), m3.GetCordoned())
	}

	sel, err := c.clusters.ListClusters(ctx(t), &hubv1.ListClustersRequest{LabelSelector: "env=dev"})
	if err != nil || len(sel.GetClusters()) != 1 || sel.GetClusters()[0].GetName() != "m2" {
		t.Errorf("ListClusters(env=dev) = %v, %v; want m2", sel, err)
	}
	_, err = c.clusters.ListClusters(ctx(t), &hubv1.ListClustersRequest{LabelSelector: "env in ("})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("ListClusters(bad selector) = %v; want INVALID_ARGUMENT", err)
	}

	one, err := c.clusters.GetCluster(ctx(t), &hubv1.GetClusterRequest{Name: "m1"})
	want := []*hubv1.APIGroupVersion{{GroupVersion: "apps/v1", Kinds: []string{"Deployment"}}}
	if err != nil || !cmp.Equal(one.GetApiEnablements(), want, protocmp.Transform()) {
		t.Errorf("GetCluster(m1) = %v, %v; want apps/v1 Deployment enabled", one, err)
	}
	_, err = c.clusters.GetCluster(ctx(t), &hubv1.GetClusterRequest{Name: "nope"})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "nope is not registered") {
		t.Errorf("GetCluster(nope) = %v; want NOT_FOUND naming it", err)
	}
}

func TestCordonAndTaint(t *testing.T) {
	h := clusterHub(t)
	c := h.dial(t, admin)

	for i := range 2 { // idempotent
		resp, err := c.clusters.Cordon(ctx(t), &hubv1.CordonRequest{Name: "m1"})
		if err != nil || !resp.GetCluster().GetCordoned() || len(resp.GetCluster().GetTaints()) != 1 {
			t.Fatalf("Cordon(m1) #%d = %v, %v; want cordoned with one taint", i+1, resp, err)
		}
		if tt := resp.GetCluster().GetTaints()[0]; tt.GetKey() != clientapi.TaintCordoned ||
			tt.GetEffect() != hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE || tt.GetAddTime() == nil {
			t.Errorf("Cordon(m1) taint = %v; want %s:NoSchedule with a time", tt, clientapi.TaintCordoned)
		}
	}
	kv, _ := h.st.Get(ctx(t), store.ClusterKey("m1"))
	if !strings.Contains(string(kv.Value), clientapi.TaintCordoned) {
		t.Errorf("stored m1 = %s; want the cordon taint stored for the scheduler", kv.Value)
	}
	rev := kv.Revision
	if resp, err := c.clusters.Uncordon(ctx(t), &hubv1.UncordonRequest{Name: "m1"}); err != nil || resp.GetCluster().GetCordoned() {
		t.Errorf("Uncordon(m1) = %v, %v; want not cordoned", resp, err)
	}
	if kv, _ := h.st.Get(ctx(t), store.ClusterKey("m1")); kv.Revision == rev {
		t.Errorf("Uncordon(m1) wrote nothing")
	}

	resp, err := c.clusters.Taint(ctx(t), &hubv1.TaintRequest{Name: "m3",
		Remove: []*hubv1.Taint{{Key: "dedicated"}},
		Add:    []*hubv1.Taint{{Key: "drain", Value: "yes", Effect: hubv1.TaintEffect_TAINT_EFFECT_NO_EXECUTE}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tt := range resp.GetCluster().GetTaints() {
		got = append(got, tt.GetKey()+"="+tt.GetValue()+":"+tt.GetEffect().String())
	}
	if want := []string{"drain=yes:TAINT_EFFECT_NO_EXECUTE"}; !cmp.Equal(got, want) {
		t.Errorf("Taint(m3) taints = %v; want %v", got, want)
	}

	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
	}{
		{"not found", func() error {
			_, err := c.clusters.Cordon(ctx(t), &hubv1.CordonRequest{Name: "nope"})
			return err
		}, codes.NotFound},
		{"no effect", func() error {
			_, err := c.clusters.Taint(ctx(t), &hubv1.TaintRequest{Name: "m1", Add: []*hubv1.Taint{{Key: "k"}}})
			return err
		}, codes.InvalidArgument},
		{"bad key", func() error {
			_, err := c.clusters.Taint(ctx(t), &hubv1.TaintRequest{Name: "m1", Add: []*hubv1.Taint{{Key: "a b", Effect: hubv1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE}}})
			return err
		}, codes.InvalidArgument},
		{"viewer", func() error {
			_, err := h.dial(t, viewer).clusters.Cordon(ctx(t), &hubv1.CordonRequest{Name: "m1"})
			return err
		}, codes.PermissionDenied},
		{"still unimplemented", func() error {
			_, err := c.clusters.Remove(ctx(t), &hubv1.RemoveRequest{Name: "m1"})
			return err
		}, codes.Unimplemented},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); status.Code(err) != tc.code {
				t.Errorf("got %v; want %s", err, tc.code)
			}
		})
	}
}

// TestGetPlacementRecordedRejections: the reasons the scheduling loop
// recorded are shown as recorded, not recomputed.
func TestGetPlacementRecordedRejections(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	c := h.dial(t, viewer)
	h.dial(t, admin).apply(t, fixture(t, "web.yaml"), false)
	recorded := strings.Replace(webBinding, `"annotations": {`,
		`"annotations": {"`+placement.AnnotationRejections+`": "[{\"cluster\":\"m2\",\"reasons\":[\"recorded reason\"]}]", `, 1)
	if _, err := h.st.Put(ctx(t), store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}), []byte(recorded)); err != nil {
		t.Fatal(err)
	}
	want := []*hubv1.ClusterRejection{{Cluster: "m2", Reasons: []string{"recorded reason"}}}
	if diff := cmp.Diff(want, getPlacement(t, c).GetRejections(), protocmp.Transform()); diff != "" {
		t.Errorf("GetPlacement rejections (-want +got):\n%s", diff)
	}
}
