package render

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/syncstate"
)

const (
	webKey = "apps/Deployment/default/web"
	apiKey = "apps/Deployment/default/api"
	cfgKey = "core/ConfigMap/default/cfg"
)

// named returns the web Deployment template renamed.
func named(t testing.TB, name string) *unstructured.Unstructured {
	obj := object(t, deploymentYAML)
	obj.SetName(name)
	return obj
}

func manifest(t testing.TB, up *agentv1.WorkUpsert) *unstructured.Unstructured {
	t.Helper()
	return decoded(t, &work.Work{Upsert: up})
}

func replicasOf(t *testing.T, up *agentv1.WorkUpsert) int64 {
	t.Helper()
	n, _, _ := unstructured.NestedInt64(manifest(t, up).Object, "spec", "replicas")
	return n
}

func imageOf(t *testing.T, up *agentv1.WorkUpsert) string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(manifest(t, up).Object, "spec", "template", "spec", "containers")
	return cs[0].(map[string]any)["image"].(string)
}

func TestCurrentReflectsStore(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("eu-1", "eu"))
	e.putCluster(cluster("us-1", "us"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(divided(), 6, target("eu-1", 2), target("us-1", 4)))
	e.putOverride(regionRegistry("eu"))
	e.start()

	cases := []struct {
		cluster  string
		replicas int64
		image    string
	}{{"eu-1", 2, "eu.registry.io/nginx:1.25"}, {"us-1", 4, "nginx:1.25"}}
	for _, tc := range cases {
		works, _ := e.current(tc.cluster)
		w, ok := works[webKey]
		if !ok || len(works) != 1 {
			t.Fatalf("Current(%s) = %v; want one work %s", tc.cluster, works, webKey)
		}
		if got := replicasOf(t, w); got != tc.replicas {
			t.Errorf("Current(%s) replicas = %d; want %d", tc.cluster, got, tc.replicas)
		}
		if got := imageOf(t, w); got != tc.image {
			t.Errorf("Current(%s) image = %q; want %q", tc.cluster, got, tc.image)
		}
	}
	if works, _ := e.current("nowhere"); len(works) != 0 {
		t.Errorf("Current(nowhere) = %v; want none", works)
	}
}

// threeTemplates stores web and api on clusters a and b and cfg on a.
func threeTemplates(e *env) {
	e.putCluster(cluster("a", "eu"))
	e.putCluster(cluster("b", "us"))
	e.putCluster(cluster("c", "us"))
	for _, name := range []string{"web", "api"} {
		tmpl := named(e.t, name)
		b := binding(duplicated(), 6, target("a", 6), target("b", 6))
		b.Name = name + "-deployment"
		e.putTemplate(tmpl)
		e.putBinding(tmpl, b)
	}
	cfg := object(e.t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: default}\ndata: {k: v}\n")
	e.putTemplate(cfg)
	e.putBinding(cfg, attached(target("a", 0)))
}

func TestChangesAreExactlyTheAffectedKeys(t *testing.T) {
	e := newEnv(t)
	threeTemplates(e)
	e.start()
	_, revA := e.current("a")
	_, revB := e.current("b")
	_, revC := e.current("c")

	updated := named(t, "web")
	updated.SetLabels(map[string]string{"app": "web", "tier": "front"})
	e.putTemplate(updated)

	for _, c := range []struct {
		cluster string
		rev     int64
	}{{"a", revA}, {"b", revB}} {
		ch, _ := e.changes(c.cluster, c.rev)
		if diff := cmp.Diff([]string{webKey}, keysOf(ch)); diff != "" {
			t.Errorf("Changes(%s) after a template change (-want +got):\n%s", c.cluster, diff)
		}
		if ch[0].Work == nil || manifest(t, ch[0].Work).GetLabels()["tier"] != "front" {
			t.Errorf("Changes(%s) = %v; want the new web", c.cluster, ch[0].Work)
		}
	}
	e.noChanges("c", revC)

	// An override policy selecting api changes api, on a only.
	_, revA = e.current("a")
	_, revB = e.current("b")
	op := regionRegistry("eu")
	op.Spec.ResourceSelectors[0].Name = "api"
	e.putOverride(op)
	ch, _ := e.changes("a", revA)
	if diff := cmp.Diff([]string{apiKey}, keysOf(ch)); diff != "" {
		t.Errorf("Changes(a) after an override policy (-want +got):\n%s", diff)
	}
	e.settle()
	e.noChanges("b", revB)
}

func TestChangesCoalesce(t *testing.T) {
	e := newEnv(t)
	threeTemplates(e)
	e.start()
	_, rev := e.current("a")
	for i := 0; i < 5; i++ {
		u := named(t, "web")
		u.SetAnnotations(map[string]string{"n": fmt.Sprint(i)})
		e.putTemplate(u)
	}
	e.settle()
	ch, _ := e.changes("a", rev)
	if len(ch) != 1 || ch[0].Key != webKey || manifest(t, ch[0].Work).GetAnnotations()["n"] != "4" {
		t.Errorf("Changes(a) after 5 writes = %v; want one change of %s to n=4", keysOf(ch), webKey)
	}
}

func TestBindingDropsCluster(t *testing.T) {
	cases := []struct {
		name     string
		preserve bool
		want     agentv1.DeletionPolicy
	}{
		{"delete", false, agentv1.DeletionPolicy_DELETION_POLICY_DELETE},
		{"preserveResourcesOnDeletion", true, agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.putCluster(cluster("a", "eu"))
			e.putCluster(cluster("b", "us"))
			web := object(t, deploymentYAML)
			b := binding(duplicated(), 6, target("a", 6), target("b", 6))
			b.Spec.PreserveResourcesOnDeletion = &tc.preserve
			e.putTemplate(web)
			e.putBinding(web, b)
			e.start()
			_, revA := e.current("a")
			_, revB := e.current("b")

			b.Spec.Clusters = b.Spec.Clusters[:1]
			e.putBinding(web, b)
			ch, _ := e.changes("b", revB)
			want := []agentv1Change{{webKey, false, tc.want, agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED}}
			if diff := cmp.Diff(want, summarize(ch)); diff != "" {
				t.Errorf("Changes(b) after the binding dropped it (-want +got):\n%s", diff)
			}
			gone, err := e.r.Gone(e.ctx, "b", []string{webKey, "apps/Deployment/default/unknown"})
			if err != nil || cmp.Diff(want, summarize(gone)) != "" {
				t.Errorf("Gone(b) = %v, %v; want %v", summarize(gone), err, want)
			}
			if works, _ := e.current("b"); len(works) != 0 {
				t.Errorf("Current(b) = %v; want none", works)
			}
			e.noChanges("a", revA)
		})
	}
}

// agentv1Change is a comparable summary of a change.
type agentv1Change struct {
	Key    string
	Upsert bool
	Policy agentv1.DeletionPolicy
	Reason agentv1.DeleteReason
}

func summarize(changes []syncstate.Change) []agentv1Change {
	var out []agentv1Change
	for _, c := range changes {
		out = append(out, agentv1Change{c.Key, c.Work != nil, c.Policy, c.Reason})
	}
	return out
}

func TestTemplateDeletedRemovesEverywhere(t *testing.T) {
	e := newEnv(t)
	threeTemplates(e)
	e.start()
	_, revA := e.current("a")
	_, revB := e.current("b")
	e.del(store.ObjectKey(templateRef(named(t, "api"))))
	want := []agentv1Change{{apiKey, false, agentv1.DeletionPolicy_DELETION_POLICY_DELETE, agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED}}
	for cluster, rev := range map[string]int64{"a": revA, "b": revB} {
		ch, _ := e.changes(cluster, rev)
		if diff := cmp.Diff(want, summarize(ch)); diff != "" {
			t.Errorf("Changes(%s) after the template's deletion (-want +got):\n%s", cluster, diff)
		}
	}
	// Gone also vouches for a binding that never placed the work on c.
	gone, err := e.r.Gone(e.ctx, "c", []string{webKey, apiKey})
	wantC := []agentv1Change{{webKey, false, agentv1.DeletionPolicy_DELETION_POLICY_DELETE, agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED}}
	if err != nil || cmp.Diff(wantC, summarize(gone)) != "" {
		t.Errorf("Gone(c) = %v, %v; want %v", summarize(gone), err, wantC)
	}
}

func TestClusterLabelChange(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(duplicated(), 6, target("a", 6)))
	e.putOverride(regionRegistry("eu", "us"))
	e.start()
	works, rev := e.current("a")
	if got := imageOf(t, works[webKey]); got != "eu.registry.io/nginx:1.25" {
		t.Fatalf("image = %q; want the eu registry", got)
	}

	// A status-only write (a heartbeat) changes nothing.
	hb := cluster("a", "eu")
	hb.Status.KubernetesVersion = "v1.34.0"
	e.putCluster(hb)
	e.settle()
	e.noChanges("a", rev)

	e.putCluster(cluster("a", "us"))
	ch, _ := e.changes("a", rev)
	if len(ch) != 1 || ch[0].Work == nil || imageOf(t, ch[0].Work) != "us.registry.io/nginx:1.25" {
		t.Errorf("Changes(a) after the region label changed = %v; want web with the us registry", summarize(ch))
	}
}

func TestSuspendedAndEvictingKeepTheirWork(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	e.putCluster(cluster("b", "us"))
	web := object(t, deploymentYAML)
	b := binding(duplicated(), 6, target("a", 6), target("b", 6))
	e.putTemplate(web)
	e.putBinding(web, b)
	e.start()
	_, revA := e.current("a")
	_, revB := e.current("b")

	// a is being evicted (kept as is); b's dispatching is suspended.
	b.Spec.Clusters = []workv1alpha1.TargetCluster{target("b", 6)}
	b.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "a", Reason: "TaintUntolerated", Producer: "test"}}
	b.Spec.Suspension = &workv1alpha1.Suspension{}
	b.Spec.Suspension.DispatchingOnClusters = &policyv1alpha1.SuspendClusters{ClusterNames: []string{"b"}}
	e.putBinding(web, b)
	e.putTemplate(object(t, strings.Replace(deploymentYAML, "nginx:1.25", "nginx:1.26", 1)))
	e.settle()
	e.noChanges("a", revA)
	e.noChanges("b", revB)
	if gone, _ := e.r.Gone(e.ctx, "a", []string{webKey}); len(gone) != 1 || !gone[0].Keep {
		t.Errorf("Gone(a) = %v; want web kept while a is being evicted", gone)
	}

	// The eviction ends: a loses the work.
	b.Spec.GracefulEvictionTasks = nil
	e.putBinding(web, b)
	ch, _ := e.changes("a", revA)
	if diff := cmp.Diff([]agentv1Change{{webKey, false, agentv1.DeletionPolicy_DELETION_POLICY_DELETE, agentv1.DeleteReason_DELETE_REASON_FAILOVER}}, summarize(ch)); diff != "" {
		t.Errorf("Changes(a) after the eviction (-want +got):\n%s", diff)
	}
}

func TestChangesRevisionGone(t *testing.T) {
	e := newEnv(t)
	threeTemplates(e)
	e.start()
	_, rev := e.current("a")
	if _, _, _, err := e.r.Changes(e.ctx, "a", rev+100); !errors.Is(err, ErrRevisionGone) {
		t.Errorf("Changes(a, future) = %v; want ErrRevisionGone", err)
	}
	e.del(store.ClusterKey("a"))
	ctx, cancel := context.WithTimeout(e.ctx, waitTimeout)
	defer cancel()
	if _, _, err := waitChanges(ctx, e.r, "a", rev); !errors.Is(err, ErrRevisionGone) {
		t.Errorf("Changes(a) after the cluster's deletion = %v; want ErrRevisionGone", err)
	}
}

// TestGoneVouchesForWorksKeptWithoutContent: a work its binding places on
// a cluster that has no published version of it (here: dispatching
// suspended from the start, as after a hub restart) is Keep, so that an
// authoritative SyncDone lists it and the agent keeps what it holds; a key
// the hub knows nothing of is left out.
func TestGoneVouchesForWorksKeptWithoutContent(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	web := object(t, deploymentYAML)
	b := binding(duplicated(), 6, target("a", 6))
	b.Spec.Suspension = &workv1alpha1.Suspension{}
	b.Spec.Suspension.DispatchingOnClusters = &policyv1alpha1.SuspendClusters{ClusterNames: []string{"a"}}
	e.putTemplate(web)
	e.putBinding(web, b)
	e.start()
	if works, _ := e.current("a"); len(works) != 0 {
		t.Fatalf("Current(a) = %v; want none while dispatching is suspended", works)
	}
	gone, err := e.r.Gone(e.ctx, "a", []string{webKey, "apps/Deployment/default/unknown"})
	if err != nil || len(gone) != 1 || gone[0].Key != webKey || !gone[0].Keep || gone[0].Work != nil {
		t.Errorf("Gone(a) = %+v, %v; want only web, Keep", gone, err)
	}
}

// TestNotAuthoritativeWhileAnObjectDoesNotDecode: an undecodable binding
// is missing from the view, so the renderer does not vouch for it until
// the binding decodes again.
func TestNotAuthoritativeWhileAnObjectDoesNotDecode(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(duplicated(), 6, target("a", 6)))
	e.start()
	if !e.r.Authoritative("a") {
		t.Fatal("Authoritative(a) = false with every object decodable; want true")
	}
	key := store.BindingKey(templateRef(web))
	e.putRaw(key, []byte("{not a binding"))
	e.waitFor("not authoritative", func() bool { return !e.r.Authoritative("a") })
	e.putBinding(web, binding(duplicated(), 6, target("a", 6)))
	e.waitFor("authoritative again", func() bool { return e.r.Authoritative("a") })
}

// fixedAuthority is an Authority that says what it is told.
type fixedAuthority struct {
	ok     bool
	reason string
}

func (a fixedAuthority) Authoritative() (bool, string) { return a.ok, a.reason }

func TestAuthorityGatesAuthoritative(t *testing.T) {
	for _, ok := range []bool{true, false} {
		r := New(nil, nil, Config{Authority: fixedAuthority{ok: ok, reason: "store restored"}}, hclog.NewNullLogger())
		if got := r.Authoritative("a"); got != ok {
			t.Errorf("Authoritative(a) with the store authority saying %t = %t; want %t", ok, got, ok)
		}
	}
}

// TestGoneKeepsWhatIsPublished: a key the cluster has by the time Gone
// looks (published after the caller read Current) is kept, never left out
// of the key set, which would make the agent delete it before its upsert
// arrives.
func TestGoneKeepsWhatIsPublished(t *testing.T) {
	e := newEnv(t)
	e.putCluster(cluster("a", "eu"))
	web := object(t, deploymentYAML)
	e.putTemplate(web)
	e.putBinding(web, binding(duplicated(), 1, target("a", 1)))
	e.start()
	gone, err := e.r.Gone(e.ctx, "a", []string{webKey})
	if err != nil || len(gone) != 1 || !gone[0].Keep || gone[0].Key != webKey {
		t.Errorf("Gone(a, web) with web published = %v, %v; want web kept", gone, err)
	}
}
