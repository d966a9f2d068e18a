package e2e

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/fleet"
)

// teamApp is a Deployment ns/name of one replica and its
// PropagationPolicy, on edge-1.
func teamApp(ns, name string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {app: %[2]s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers: [{name: main, image: "nginx:1.27"}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[2]s}]
  placement: {clusterAffinity: {clusterNames: [edge-1]}}
`, ns, name)
}

// clusterScoped are cluster-scoped objects only a fleet-wide admin
// writes, by the kind a refusal must name.
var clusterScoped = map[string]string{
	"ClusterPropagationPolicy":         "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {name: grab}\nspec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}], placement: {clusterAffinity: {clusterNames: [edge-2]}}}\n",
	"ClusterOverridePolicy":            "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterOverridePolicy\nmetadata: {name: grab}\nspec: {resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]}\n",
	"ResourceInterpreterCustomization": "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata: {name: grab}\nspec: {target: {apiVersion: apps/v1, kind: Deployment}, customizations: {replicaResource: {luaScript: 'function GetReplicas(obj) return 0, nil end'}}}\n",
	"CustomResourceDefinition":         "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: grabs.example.com}\nspec: {group: example.com, names: {kind: Grab, plural: grabs}, scope: Namespaced, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}\n",
	"Namespace":                        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-z}\n",
}

// testNamespacedRoles is issue 38's two users: team-a's editor alice and
// team-b's editor bob, made with tetherctl user create --namespace. Alice
// deploys to team-a (it runs in edge-1), is refused in team-b and on every
// cluster-scoped kind and admin call (each refusal names the namespace or
// kind), and sees none of team-b in List, Watch, Simulate or placements;
// a role changed mid-Watch ends her watch of team-a and narrows her watch
// of everything, which her revocation then ends.
func testNamespacedRoles(t *testing.T, s *suite7) {
	s.apply(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b}\n")
	alice, aliceConf := s.user(t, "alice", "team-a")
	bob, _ := s.user(t, "bob", "team-b")
	ctx, cancel := context.WithTimeout(context.Background(), 2*memberWait)
	defer cancel()
	events := watchAll(ctx, t, alice.Client, client.Selector{})

	if _, err := alice.Apply(ctx, []byte(teamApp("team-a", "web"))); err != nil {
		t.Fatalf("alice applies team-a/web: %v", err)
	}
	if _, err := bob.Apply(ctx, []byte(teamApp("team-b", "api"))); err != nil {
		t.Fatalf("bob applies team-b/api: %v", err)
	}
	s.waitMemberIn(t, edge1, deploymentGVR, "team-a", "web", "1 ready", workloadIs(1, "nginx:1.27", 1))
	s.waitMemberIn(t, edge1, deploymentGVR, "team-b", "api", "1 ready", workloadIs(1, "nginx:1.27", 1))

	_, err := alice.Apply(ctx, []byte(teamApp("team-b", "web")))
	denied(t, "alice applies in team-b", err, `namespace "team-b"`)
	if out, code := ctlAs(ctx, aliceConf, "delete", "deployment", "api", "-n", "team-b"); code == 0 || !strings.Contains(out, `namespace "team-b"`) {
		t.Errorf("tetherctl delete as alice in team-b: exit %d, %q; want refused naming team-b", code, out)
	}
	for kind, doc := range clusterScoped {
		_, err := alice.Apply(ctx, []byte(doc))
		denied(t, "alice applies a "+kind, err, kind)
	}
	_, err = alice.Apply(ctx, []byte("apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\n"+
		"metadata: {name: more, namespace: team-a}\nspec: {overall: {cpu: '100'}}\n"))
	denied(t, "alice raises team-a's own quota", err, "FederatedResourceQuota (it bounds namespace \"team-a\") needs a fleet-wide admin")
	_, err = alice.Cordon(ctx, edge1)
	denied(t, "alice cordons edge-1", err, "Cluster")
	_, err = alice.CreateToken(ctx, &hubv1.CreateTokenRequest{})
	denied(t, "alice creates a token", err, "BootstrapToken")
	_, err = alice.SetUserRole(ctx, "bob", hubv1.Role_ROLE_ADMIN, nil)
	denied(t, "alice sets bob's role", err, "User")

	refB := &hubv1.ObjectRef{ApiVersion: "apps/v1", Kind: "Deployment", Namespace: "team-b", Name: "api"}
	_, err = alice.GetPlacement(ctx, refB)
	denied(t, "alice's GetPlacement of team-b/api", err, `namespace "team-b"`)
	_, err = alice.Simulate(ctx, []byte(strings.Split(teamApp("team-b", "api"), "---")[0]))
	denied(t, "alice simulates team-b/api", err, `namespace "team-b"`)
	// Other steps may have left objects in team-a too: every listed
	// object is team-a's, and alice's own web is among them.
	for _, kind := range []string{"Deployment", "PropagationPolicy"} {
		objs, _, err := alice.List(ctx, client.Selector{Kind: kind}, 0)
		web := false
		for _, o := range objs {
			web = web || o.GetRef().GetNamespace() == "team-a" && o.GetRef().GetName() == "web"
			if o.GetRef().GetNamespace() != "team-a" {
				web, err = false, fmt.Errorf("listed %s/%s", o.GetRef().GetNamespace(), o.GetRef().GetName())
				break
			}
		}
		if err != nil || !web {
			t.Errorf("alice lists every %s: %v (web listed: %v); want team-a's only, web among them", kind, err, web)
		}
	}
	if seen := placementsSeen(ctx, t, alice.Client); strings.Join(seen, ",") != "team-a/web" {
		t.Errorf("alice's WatchPlacements sent %v; want team-a/web only", seen)
	}
	if _, err := alice.Apply(ctx, []byte(teamApp("team-a", "marker"))); err != nil {
		t.Fatal(err)
	}
	if seen := eventsUntil(t, events, "team-a/marker"); strings.Contains(seen, "team-b") || !strings.Contains(seen, "team-a/web") {
		t.Errorf("alice's Watch of every namespace sent %s; want team-a's objects only", seen)
	}
	testRoleChangedMidWatch(ctx, t, s, alice.Client, events)
}

// testRoleChangedMidWatch: an admin narrows alice to viewer of team-c
// while she watches team-a and everything: the first watch ends
// PERMISSION_DENIED naming team-a; the second goes on with team-c's
// objects and none of team-a's, until `tetherctl user revoke alice` ends
// it.
func testRoleChangedMidWatch(ctx context.Context, t *testing.T, s *suite7, alice *client.Client, everything <-chan watched) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	inA := watchAll(wctx, t, alice, client.Selector{Namespace: "team-a"})
	s.tetherctl(t, "user", "set-role", "alice", "--role", "viewer", "--namespace", "team-c")
	ended := false
	for ev := range inA {
		if ev.err != nil {
			denied(t, "alice's Watch of team-a after her role lost it", ev.err, `namespace "team-a"`)
			ended = true
			break
		}
	}
	if !ended {
		t.Error("alice's Watch of team-a ended without an error after her role lost team-a")
	}
	s.apply(t, teamApp("team-a", "after"))
	s.apply(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-c}\n---\n"+teamApp("team-c", "marker"))
	if seen := eventsUntil(t, everything, "team-c/marker"); strings.Contains(seen, "team-a/after") {
		t.Errorf("alice's Watch of everything, after her role narrowed to team-c, sent %s; want nothing of team-a written since", seen)
	}
	s.tetherctl(t, "user", "revoke", "alice")
	for ev := range everything {
		if ev.err != nil {
			if status.Code(ev.err) != codes.Unauthenticated || !strings.Contains(ev.err.Error(), "revoked") {
				t.Errorf("alice's Watch of everything after her revocation ended with %v; want Unauthenticated naming the revocation", ev.err)
			}
			return
		}
	}
	t.Error("alice's Watch of everything ended without an error after her revocation")
}

// user makes a user editor of ns with tetherctl and dials as it.
func (s *suite7) user(t *testing.T, name, ns string) (*fleet.Client, string) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), name+".conf")
	s.tetherctl(t, "user", "create", name, "--role", "editor", "--namespace", ns, "-o", conf)
	cfg, err := clientconfig.Load(conf)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fleet.Dial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, conf
}

// ctlAs runs tetherctl with a user's config; it returns the output and
// the exit code.
func ctlAs(ctx context.Context, conf string, args ...string) (string, int) {
	var out bytes.Buffer
	code := ctl.Run(ctx, append([]string{"--config", conf}, args...), strings.NewReader(""), &out, &out)
	return out.String(), code
}

// denied fails the test unless err is PERMISSION_DENIED naming want.
func denied(t *testing.T, what string, err error, want string) {
	t.Helper()
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), want) {
		t.Errorf("%s = %v; want PERMISSION_DENIED naming %s", what, err, want)
	}
}

// watched is one event of watchAll: an object's namespace and name, or
// the error that ended the watch.
type watched struct {
	kind, ns, name string
	err            error
}

// watchAll watches sel from now until ctx ends or the watch fails (the
// last value then carries the error); the channel is closed after it.
func watchAll(ctx context.Context, t *testing.T, c *client.Client, sel client.Selector) <-chan watched {
	out := make(chan watched, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for ev, err := range c.Watch(ctx, sel, 0) {
			w := watched{err: err}
			if r := ev.GetObject().GetRef(); err == nil {
				w = watched{kind: r.GetKind(), ns: r.GetNamespace(), name: r.GetName()}
			}
			select {
			case out <- w:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { <-done })
	return out
}

// eventsUntil reads events until the Deployment nsName (applied after
// its policy) and returns what it read.
func eventsUntil(t *testing.T, events <-chan watched, nsName string) string {
	t.Helper()
	var seen []string
	for ev := range events {
		if ev.err != nil {
			t.Fatalf("watch ended: %v (after %v)", ev.err, seen)
		}
		seen = append(seen, ev.ns+"/"+ev.name)
		if ev.kind == "Deployment" && ev.ns+"/"+ev.name == nsName {
			return strings.Join(seen, " ")
		}
	}
	t.Fatalf("watch closed before %s (after %v)", nsName, seen)
	return ""
}

// placementsSeen returns the templates of a WatchPlacements' current
// placements.
func placementsSeen(ctx context.Context, t *testing.T, c *client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var seen []string
	for m, err := range c.WatchPlacements(ctx, client.Selector{}, 0) {
		if err != nil {
			t.Fatalf("WatchPlacements: %v", err)
		}
		if m.GetSynced() {
			break
		}
		r := m.GetPlacement().GetTemplate()
		seen = append(seen, r.GetNamespace()+"/"+r.GetName())
	}
	return seen
}
