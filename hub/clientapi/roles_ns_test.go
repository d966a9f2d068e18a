package clientapi_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// namespaces applies Namespaces team-a, team-b and team-c as root.
func namespaces(t *testing.T, h *hub) {
	t.Helper()
	h.dial(t, root).apply(t, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-c}\n"), false)
}

// TestNamespacedEditor: an editor of team-a writes templates and policies
// there, is refused in team-b and on every cluster-scoped kind and admin
// call (the refusal names the namespace or kind), and reads nothing of
// team-b through Get, List, Watch, Simulate or the placement calls.
func TestNamespacedEditor(t *testing.T) {
	h := startRolesHub(t)
	namespaces(t, h)
	h.dial(t, root).apply(t, deployment("team-b", "secret-app"), false)
	h.setRole(t, "alice", hubv1.Role_ROLE_EDITOR, "team-a")
	a := h.dial(t, alice)
	conn := h.conn(t, alice)

	if resp, err := a.objects.Apply(ctx(t), &hubv1.ApplyRequest{Manifests: deployment("team-a", "web")}); err != nil || resp.GetPartial() {
		t.Fatalf("Apply in team-a as its editor = %v, %v; want applied", resp, err)
	}
	_, err := a.objects.Apply(ctx(t), &hubv1.ApplyRequest{Manifests: deployment("team-b", "web")})
	refused(t, "Apply in team-b", err, `namespace "team-b"`)
	_, err = a.objects.Apply(ctx(t), &hubv1.ApplyRequest{Manifests: deployment("team-a", "web"), DefaultNamespace: "team-b"})
	if err != nil {
		t.Errorf("Apply naming team-a with default namespace team-b = %v; want applied (the objects name team-a)", err)
	}
	for kind, doc := range map[string]string{
		"ClusterPropagationPolicy":         "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: all}\nspec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]}\n",
		"ClusterOverridePolicy":            "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata: {name: all}\nspec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]}\n",
		"CustomResourceDefinition":         "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec: {group: example.com, names: {kind: Widget, plural: widgets}, scope: Namespaced, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}\n",
		"ResourceInterpreterCustomization": "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: loop}\nspec: {target: {apiVersion: example.com/v1, kind: Widget}, customizations: {replicaResource: {luaScript: 'while true do end'}}}\n",
		"Namespace":                        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-d}\n",
		"WorkloadRebalancer":               "apiVersion: apps.karmada.io/v1alpha1\nkind: WorkloadRebalancer\nmetadata: {name: back}\nspec: {workloads: [{apiVersion: apps/v1, kind: Deployment, namespace: team-a, name: web}]}\n",
	} {
		_, err := a.objects.Apply(ctx(t), &hubv1.ApplyRequest{Manifests: []byte(doc)})
		refused(t, "Apply "+kind, err, kind)
	}
	_, err = a.clusters.Cordon(ctx(t), &hubv1.CordonRequest{Name: "m1"})
	refused(t, "Cordon", err, "writing Cluster")
	_, err = hubv1.NewTokenServiceClient(conn).CreateToken(ctx(t), &hubv1.CreateTokenRequest{})
	refused(t, "CreateToken", err, "BootstrapToken")
	_, err = hubv1.NewUserServiceClient(conn).SetUserRole(ctx(t), &hubv1.SetUserRoleRequest{Name: "alice", Role: hubv1.Role_ROLE_ADMIN})
	refused(t, "SetUserRole", err, "writing User")

	refB := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "team-b", Name: "secret-app"}
	_, err = a.objects.Get(ctx(t), &hubv1.GetRequest{Ref: refB})
	refused(t, "Get team-b", err, `namespace "team-b"`)
	_, err = a.objects.Delete(ctx(t), &hubv1.DeleteRequest{Ref: refB, DryRun: true})
	refused(t, "Delete team-b", err, `namespace "team-b"`)
	_, err = a.objects.List(ctx(t), &hubv1.ListRequest{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "team-b"})
	refused(t, "List team-b", err, `namespace "team-b"`)
	_, err = a.objects.List(ctx(t), &hubv1.ListRequest{ApiVersion: "policy.karmada.io/v1alpha1", Kind: "ClusterPropagationPolicy"})
	refused(t, "List ClusterPropagationPolicies", err, "ClusterPropagationPolicy")
	list, err := a.objects.List(ctx(t), &hubv1.ListRequest{ApiVersion: "apps/v1", Kind: "Deployment"})
	if err != nil || len(list.GetObjects()) != 1 || list.GetObjects()[0].GetRef().GetNamespace() != "team-a" {
		t.Errorf("List every Deployment as team-a's editor = %v, %v; want team-a/web only", list.GetObjects(), err)
	}
	_, err = a.placements.GetPlacement(ctx(t), &hubv1.GetPlacementRequest{Template: refB})
	refused(t, "GetPlacement team-b", err, `namespace "team-b"`)
	ws, err := a.placements.WatchPlacement(ctx(t), &hubv1.WatchPlacementRequest{Template: refB})
	if err == nil {
		_, err = ws.Recv()
	}
	refused(t, "WatchPlacement team-b", err, `namespace "team-b"`)
	_, err = a.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: deployment("team-b", "secret-app")[:strings.Index(string(deployment("team-b", "secret-app")), "---")]})
	refused(t, "Simulate team-b", err, `namespace "team-b"`)
	_, err = a.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(strings.Split(string(deployment("team-a", "web")), "---")[0]),
		Policies: []byte(strings.Split(string(deployment("team-b", "web")), "---\n")[1])})
	refused(t, "Simulate with a policy of team-b", err, `namespace "team-b"`)
	if _, err := a.placements.Simulate(ctx(t), &hubv1.SimulateRequest{Template: []byte(strings.Split(string(deployment("team-a", "web")), "---")[0])}); err != nil {
		t.Errorf("Simulate team-a = %v; want a simulation", err)
	}

	if seen := placementsUntilSynced(t, a); strings.Join(seen, ",") != "team-a/web" {
		t.Errorf("WatchPlacements as team-a's editor sent %v; want team-a/web only", seen)
	}
	watchSeesOnly(t, h, a, "team-a")
}

// placementsUntilSynced returns the templates of a WatchPlacements'
// current placements.
func placementsUntilSynced(t *testing.T, c *client) []string {
	t.Helper()
	s, err := c.placements.WatchPlacements(ctx(t), &hubv1.WatchPlacementsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for {
		m, err := s.Recv()
		if err != nil {
			t.Fatalf("WatchPlacements: %v", err)
		}
		if m.GetSynced() {
			return seen
		}
		ref := m.GetPlacement().GetTemplate()
		seen = append(seen, ref.GetNamespace()+"/"+ref.GetName())
	}
}

// watchSeesOnly watches every object from revision 1 as c, then has root
// write in team-b and then a marker in ns; every event up to the marker
// must be of ns.
func watchSeesOnly(t *testing.T, h *hub, c *client, ns string) {
	t.Helper()
	s, err := c.objects.Watch(ctx(t), &hubv1.WatchRequest{StartRevision: 1})
	if err != nil {
		t.Fatal(err)
	}
	h.dial(t, root).apply(t, deployment("team-b", "later"), false)
	h.dial(t, root).apply(t, deployment(ns, "marker"), false)
	for {
		ev, err := s.Recv()
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		ref := ev.GetObject().GetRef()
		if ref.GetNamespace() != ns {
			t.Errorf("Watch as a user of %s sent %s %s/%s", ns, ref.GetKind(), ref.GetNamespace(), ref.GetName())
		}
		if ref.GetKind() == "PropagationPolicy" && ref.GetName() == "marker" {
			return
		}
	}
}

// TestRoleChangeFollowsOpenStreams: an admin changes alice's role while
// she watches. Her Watch of team-a ends PERMISSION_DENIED naming team-a,
// her WatchPlacement of a team-a template likewise, and her watch of every
// namespace goes on with only what the new role reads.
func TestRoleChangeFollowsOpenStreams(t *testing.T) {
	h := startRolesHub(t)
	namespaces(t, h)
	h.dial(t, root).apply(t, deployment("team-a", "web"), false)
	h.setRole(t, "alice", hubv1.Role_ROLE_EDITOR, "team-a", "team-c")
	a := h.dial(t, alice)
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inA, err := a.objects.Watch(c, &hubv1.WatchRequest{Namespace: "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	everywhere, err := a.objects.Watch(c, &hubv1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	placement, err := a.placements.WatchPlacement(c, &hubv1.WatchPlacementRequest{Template: &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "team-a", Name: "web"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := placement.Recv(); err != nil { // the current placement: the stream is open
		t.Fatal(err)
	}
	h.setRole(t, "alice", hubv1.Role_ROLE_READ_ONLY, "team-c")

	_, err = inA.Recv()
	refused(t, "Watch of team-a after the role lost team-a", err, `namespace "team-a"`)
	for err = nil; err == nil; _, err = placement.Recv() {
	}
	refused(t, "WatchPlacement of team-a after the role lost team-a", err, `namespace "team-a"`)
	h.dial(t, root).apply(t, deployment("team-a", "after"), false)
	h.dial(t, root).apply(t, deployment("team-c", "marker"), false)
	for {
		ev, err := everywhere.Recv()
		if errors.Is(err, io.EOF) || status.Code(err) != codes.OK {
			t.Fatalf("Watch of every namespace after the role narrowed: %v; want it to go on", err)
		}
		ref := ev.GetObject().GetRef()
		if ref.GetNamespace() != "team-c" {
			t.Errorf("Watch after the role narrowed to team-c sent %s %s/%s", ref.GetKind(), ref.GetNamespace(), ref.GetName())
		}
		if ref.GetKind() == "PropagationPolicy" && ref.GetName() == "marker" {
			break
		}
	}
}
