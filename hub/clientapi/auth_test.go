package clientapi_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/clientapi"
	"github.com/tetherproj/tether/hub/pki"
)

func TestAuthorization(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	h.dial(t, admin).apply(t, fixture(t, "web.yaml"), false)
	ref := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}
	calls := map[string]func(*client) error{
		"Get": func(c *client) error {
			_, err := c.objects.Get(ctx(t), &hubv1.GetRequest{Ref: ref})
			return err
		},
		"List": func(c *client) error {
			_, err := c.objects.List(ctx(t), &hubv1.ListRequest{Kind: "Deployment"})
			return err
		},
		"GetPlacement": func(c *client) error {
			_, err := c.placements.GetPlacement(ctx(t), &hubv1.GetPlacementRequest{Template: ref})
			return err
		},
		"WatchPlacements": func(c *client) error {
			s, err := c.placements.WatchPlacements(ctx(t), &hubv1.WatchPlacementsRequest{Kind: "Deployment"})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
		"Apply": func(c *client) error {
			_, err := c.objects.Apply(ctx(t), &hubv1.ApplyRequest{Manifests: fixture(t, "web.yaml")})
			return err
		},
		"Delete": func(c *client) error {
			_, err := c.objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: ref, DryRun: true})
			return err
		},
		"Watch": func(c *client) error {
			s, err := c.objects.Watch(ctx(t), &hubv1.WatchRequest{Kind: "Deployment", StartRevision: 1})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
	}
	tests := []struct {
		who  string
		id   *pki.Identity
		want map[string]codes.Code // calls not listed must succeed
	}{
		{"admin", admin, nil},
		{"viewer", viewer, map[string]codes.Code{"Apply": codes.PermissionDenied, "Delete": codes.PermissionDenied}},
		{"agent", agent, allCalls(calls, codes.PermissionDenied)},
		{"no certificate", nil, allCalls(calls, codes.Unauthenticated)},
	}
	for _, tt := range tests {
		c := h.dial(t, tt.id)
		for name, call := range calls {
			err := call(c)
			if want := tt.want[name]; status.Code(err) != want {
				t.Errorf("%s as %s = %v; want %v", name, tt.who, err, want)
			}
		}
	}
}

func allCalls(calls map[string]func(*client) error, code codes.Code) map[string]codes.Code {
	out := map[string]codes.Code{}
	for name := range calls {
		out[name] = code
	}
	return out
}

func TestLaterServicesAreUnimplemented(t *testing.T) {
	h := startHub(t, clientapi.Config{})
	_, err := h.dial(t, admin).clusters.Remove(ctx(t), &hubv1.RemoveRequest{Name: "m1"})
	if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "without a registry") {
		t.Errorf("Remove as admin = %v; want Unimplemented with an explanation", err)
	}
	_, err = h.dial(t, nil).clusters.ListClusters(ctx(t), &hubv1.ListClustersRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("ListClusters without certificate = %v; want Unauthenticated", err)
	}
}
