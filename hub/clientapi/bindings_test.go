package clientapi_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/store"
)

// TestGetBindingByName: the binding GetPlacement names can be read, with
// its per-cluster status, though it is stored under its template's key.
func TestGetBindingByName(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	c := h.dial(t, viewer)
	if _, err := h.st.Put(ctx(t), store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}), []byte(webBinding)); err != nil {
		t.Fatal(err)
	}
	ref := &hubv1.ObjectRef{ApiVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding", Namespace: "default", Name: "web-deployment"}
	obj := getObject(t, c, ref)
	st, _ := obj["status"].(map[string]any)
	items, _ := st["aggregatedStatus"].([]any)
	if obj["kind"] != "ResourceBinding" || len(items) != 1 {
		t.Errorf("Get(ResourceBinding default/web-deployment) = %v; want the binding with its one aggregated item", obj)
	}
	for _, r := range []*hubv1.ObjectRef{
		{Kind: "ResourceBinding", Namespace: "other", Name: "web-deployment"},
		{Kind: "ResourceBinding", Namespace: "default", Name: "nope"},
	} {
		if _, err := c.objects.Get(ctx(t), &hubv1.GetRequest{Ref: r}); status.Code(err) != codes.NotFound {
			t.Errorf("Get(%v) = %v; want NOT_FOUND", r, err)
		}
	}
}
