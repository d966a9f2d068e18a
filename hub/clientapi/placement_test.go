package clientapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/aggregate/fold"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/pipeline/bind"
	"github.com/tetherproj/tether/hub/store"
)

// putClusters stores the clusters of testdata/clusters.json as the
// registration does.
func putClusters(t *testing.T, h *hub) {
	t.Helper()
	var clusters []map[string]any
	if err := json.Unmarshal(fixture(t, "clusters.json"), &clusters); err != nil {
		t.Fatal(err)
	}
	for _, c := range clusters {
		js, _ := json.Marshal(c)
		if _, err := h.st.Put(ctx(t), store.ClusterKey(c["metadata"].(map[string]any)["name"].(string)), js); err != nil {
			t.Fatal(err)
		}
	}
}

// webBinding is the binding the detector, scheduler and aggregator would
// write for web.yaml's Deployment: claimed by PropagationPolicy default/web,
// placed on m1, with one member status and the template status aggregated
// from it.
const webBinding = `{
  "apiVersion": "work.tether.io/v1alpha1", "kind": "ResourceBinding",
  "metadata": {"name": "web-deployment", "namespace": "default",
    "labels": {"` + bind.LabelPPPermanentID + `": "7"},
    "annotations": {"` + bind.AnnotationPPNamespace + `": "default", "` + bind.AnnotationPPName + `": "web",
      "` + fold.AnnotationTemplateStatus + `": "{\"replicas\":3,\"readyReplicas\":2,\"updatedReplicas\":3,\"availableReplicas\":2}"}},
  "spec": {
    "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web"},
    "replicas": 3,
    "placement": {"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}},
      "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}},
    "clusters": [{"name": "m1", "replicas": 3}]},
  "status": {
    "lastScheduledTime": "2026-01-01T00:00:00Z",
    "conditions": [{"type": "Scheduled", "status": "True", "reason": "Success", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    "aggregatedStatus": [{"clusterName": "m1", "applied": true, "health": "Healthy",
      "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}]}
}`

var webRef = &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}

func TestGetPlacementFromBinding(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	c := h.dial(t, viewer)
	h.dial(t, admin).apply(t, fixture(t, "web.yaml"), false)

	pl := getPlacement(t, c)
	if len(pl.GetClusters()) != 0 || !strings.Contains(pl.GetMessage(), "no propagation policy") {
		t.Errorf("GetPlacement without binding = %v; want no clusters and a message", pl)
	}
	if _, err := h.st.Put(ctx(t), store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}), []byte(webBinding)); err != nil {
		t.Fatal(err)
	}
	pl = getPlacement(t, c)
	want := &hubv1.Placement{
		Template:  webRef,
		Policy:    &hubv1.ObjectRef{ApiVersion: "policy.tether.io/v1alpha1", Kind: "PropagationPolicy", Namespace: "default", Name: "web"},
		Binding:   &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "web-deployment"},
		Scheduled: true,
		Clusters:  []*hubv1.ClusterPlacement{{Cluster: "m1", Replicas: 3}},
	}
	ignore := protocmp.IgnoreFields(&hubv1.Placement{}, "rejections", "revision", "schedule_time")
	if diff := cmp.Diff(want, pl, protocmp.Transform(), ignore); diff != "" {
		t.Errorf("GetPlacement (-want +got):\n%s", diff)
	}
	if pl.GetRevision() == 0 || pl.GetScheduleTime().AsTime().Year() != 2026 {
		t.Errorf("GetPlacement revision %d, schedule time %v; want both set", pl.GetRevision(), pl.GetScheduleTime())
	}
	reasons := map[string]string{}
	for _, r := range pl.GetRejections() {
		reasons[r.GetCluster()] = strings.Join(r.GetReasons(), "; ")
	}
	if len(reasons) != 2 || !strings.Contains(reasons["m2"], "affinity") || !strings.Contains(reasons["m3"], "taint") {
		t.Errorf("GetPlacement rejections = %v; want m2 for affinity and m3 for its taint", reasons)
	}
}

func getPlacement(t *testing.T, c *client) *hubv1.Placement {
	t.Helper()
	resp, err := c.placements.GetPlacement(ctx(t), &hubv1.GetPlacementRequest{Template: webRef})
	if err != nil {
		t.Fatalf("GetPlacement: %v", err)
	}
	return resp.GetPlacement()
}

// TestGetMergesBindingStatus: a template's status is aggregated from its
// binding on read.
func TestGetMergesBindingStatus(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, admin)
	c.apply(t, fixture(t, "web.yaml"), false)
	if _, err := h.st.Put(ctx(t), store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}), []byte(webBinding)); err != nil {
		t.Fatal(err)
	}
	obj := getObject(t, c, webRef)
	st, _ := obj["status"].(map[string]any)
	if st["replicas"] != 3.0 || st["readyReplicas"] != 2.0 {
		t.Errorf("Get(Deployment web) status = %v; want the aggregated member status (replicas 3, readyReplicas 2)", st)
	}
	list := listNames(t, c, &hubv1.ListRequest{Kind: "Deployment"})
	if !slices.Equal(list, []string{"default/web"}) {
		t.Errorf("List(Deployment) = %v", list)
	}
	// Re-applying the template is UNCHANGED whatever its status.
	if got := outcomes(c.apply(t, fixture(t, "web.yaml"), false)); got[0] != "Deployment default/web UNCHANGED" {
		t.Errorf("re-Apply after status = %v; want UNCHANGED", got)
	}
}

func TestWatchPlacement(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	putClusters(t, h)
	h.dial(t, admin).apply(t, fixture(t, "web.yaml"), false)
	stream, err := h.dial(t, viewer).placements.WatchPlacement(ctx(t), &hubv1.WatchPlacementRequest{Template: webRef})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil || first.GetType() != hubv1.EventType_EVENT_TYPE_ADDED || len(first.GetPlacement().GetClusters()) != 0 {
		t.Fatalf("first WatchPlacement message = %v, %v; want ADDED without clusters", first, err)
	}
	if _, err := h.st.Put(ctx(t), store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}), []byte(webBinding)); err != nil {
		t.Fatal(err)
	}
	next, err := stream.Recv()
	if err != nil || next.GetType() != hubv1.EventType_EVENT_TYPE_MODIFIED || len(next.GetPlacement().GetClusters()) != 1 {
		t.Fatalf("WatchPlacement after the binding = %v, %v; want MODIFIED with m1", next, err)
	}
	if _, err := h.dial(t, admin).objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: webRef}); err != nil {
		t.Fatal(err)
	}
	last, err := stream.Recv()
	if err != nil || last.GetType() != hubv1.EventType_EVENT_TYPE_DELETED {
		t.Fatalf("WatchPlacement after deleting the template = %v, %v; want DELETED", last, err)
	}
}
