package kube

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// deadline bounds a wait for the API server.
const deadline = 30 * time.Second

func newClient(t *testing.T) *Client {
	t.Helper()
	c, err := New(env.Clusters[0].RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// flat is discovery as "group/version resource kind namespaced verbs"
// lines, sorted, without subresources.
func flat(lists []*metav1.APIResourceList) []string {
	var out []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				out = append(out, fmt.Sprintf("%s %s %s %t %v", l.GroupVersion, r.Name, r.Kind, r.Namespaced, r.Verbs))
			}
		}
	}
	sort.Strings(out)
	return out
}

// discoveryModes are the two discovery documents a server may answer
// with: the aggregated documents and the legacy per-group lists.
var discoveryModes = []struct {
	name   string
	accept string
}{
	{"aggregated", acceptDiscovery},
	{"legacy", runtime.ContentTypeJSON},
}

// TestDiscoverMatchesClientGo: aggregated discovery and the legacy lists
// give what client-go's discovery client gives, without subresources.
func TestDiscoverMatchesClientGo(t *testing.T) {
	_, want, err := env.Clusters[0].Clientset().Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range discoveryModes {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t)
			c.accept = tt.accept
			got, err := c.Discover(context.Background())
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			if diff := cmp.Diff(flat(want), flat(got)); diff != "" {
				t.Errorf("Discover (-client-go +got):\n%s", diff)
			}
			for _, l := range got {
				for _, r := range l.APIResources {
					if strings.Contains(r.Name, "/") {
						t.Errorf("Discover: %s has subresource %s", l.GroupVersion, r.Name)
					}
				}
			}
			if got[0].GroupVersion != "v1" {
				t.Errorf("Discover: first group version %s; want v1", got[0].GroupVersion)
			}
		})
	}
}

// TestDiscoverUnavailableGroup: a group version whose APIService does
// not answer is left out and named by a PartialError, the rest returned.
func TestDiscoverUnavailableGroup(t *testing.T) {
	ctx := context.Background()
	apiservices := env.Clusters[0].Dynamic().Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1.down.example.com"},
		"spec": map[string]any{
			"group": "down.example.com", "version": "v1", "groupPriorityMinimum": int64(100), "versionPriority": int64(10),
			"service":               map[string]any{"namespace": "default", "name": "nowhere", "port": int64(443)},
			"insecureSkipTLSVerify": true,
		},
	}}
	if _, err := apiservices.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiservices.Delete(context.Background(), "v1.down.example.com", metav1.DeleteOptions{}) })
	down := schema.GroupVersion{Group: "down.example.com", Version: "v1"}
	for _, tt := range discoveryModes {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t)
			c.accept = tt.accept
			var got []*metav1.APIResourceList
			var partial *PartialError
			poll(t, "Discover names "+down.String(), func() (bool, string) {
				var err error
				got, err = c.Discover(ctx)
				if !errors.As(err, &partial) {
					return false, fmt.Sprint(err)
				}
				_, ok := partial.Failed[down]
				return ok, err.Error()
			})
			for _, l := range got {
				if l.GroupVersion == down.String() {
					t.Errorf("Discover returned the list of %s, which it reported failed", down)
				}
			}
			if !hasResource(got, "apps/v1", "deployments") {
				t.Errorf("Discover with a failed group returned no apps/v1 deployments: %v", flat(got))
			}
		})
	}
}

func hasResource(lists []*metav1.APIResourceList, gv, resource string) bool {
	for _, l := range lists {
		for _, r := range l.APIResources {
			if l.GroupVersion == gv && r.Name == resource {
				return true
			}
		}
	}
	return false
}

func TestResources(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	l, err := c.Resources(ctx, schema.GroupVersion{Group: "apps", Version: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if !hasResource([]*metav1.APIResourceList{l}, "apps/v1", "deployments") || l.GroupVersion != "apps/v1" {
		t.Errorf("Resources(apps/v1) = %v; want deployments in apps/v1", flat([]*metav1.APIResourceList{l}))
	}
	for _, r := range l.APIResources {
		if strings.Contains(r.Name, "/") {
			t.Errorf("Resources(apps/v1) has subresource %s", r.Name)
		}
	}
	_, err = c.Resources(ctx, schema.GroupVersion{Group: "nothing.example.com", Version: "v1"})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Resources(nothing.example.com/v1) error = %v; want NotFound", err)
	}
}

func TestPreferred(t *testing.T) {
	list := func(gv string, names ...string) *metav1.APIResourceList {
		l := &metav1.APIResourceList{GroupVersion: gv}
		for _, n := range names {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: n})
		}
		return l
	}
	got := Preferred([]*metav1.APIResourceList{
		list("v1", "pods", "services"),
		list("autoscaling/v2", "horizontalpodautoscalers"),
		list("autoscaling/v1", "horizontalpodautoscalers", "legacyonly"),
		list("batch/v1", "jobs"),
	})
	want := []*metav1.APIResourceList{
		list("v1", "pods", "services"),
		list("autoscaling/v2", "horizontalpodautoscalers"),
		list("autoscaling/v1", "legacyonly"),
		list("batch/v1", "jobs"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Preferred (-want +got):\n%s", diff)
	}
}

// TestTypedResources writes and reads core/v1 objects through the typed
// clients, as the agent does (Secrets for its state, Events, Nodes for
// capacity).
func TestTypedResources(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	secrets := c.Secrets("default")
	in := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kube-test", Namespace: "default"}, Data: map[string][]byte{"a": []byte("1")}}
	created, err := secrets.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() {
		_ = env.Clusters[0].Clientset().CoreV1().Secrets("default").Delete(context.Background(), "kube-test", metav1.DeleteOptions{})
	})
	if created.ResourceVersion == "" || string(created.Data["a"]) != "1" {
		t.Errorf("Create = %+v; want a stored Secret with a=1", created)
	}
	if _, err := secrets.Create(ctx, in, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second Create error = %v; want AlreadyExists", err)
	}
	created.Data["a"] = []byte("2")
	if _, err := secrets.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	got, err := secrets.Get(ctx, "kube-test", metav1.GetOptions{})
	if err != nil || string(got.Data["a"]) != "2" {
		t.Errorf("Get after Update = %v, %v; want a=2", got.Data, err)
	}
	if _, err := secrets.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("Update from a stale resourceVersion: error = %v; want Conflict", err)
	}
	if _, err := secrets.Get(ctx, "absent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get(absent) error = %v; want NotFound", err)
	}
	nodes, err := c.Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("Nodes().List: %v", err)
	}
	want, err := env.Clusters[0].Clientset().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != len(want.Items) {
		t.Errorf("Nodes().List = %d nodes; want %d", len(nodes.Items), len(want.Items))
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "kube-test.1", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Secret", Namespace: "default", Name: "kube-test"}, Reason: "Test", Message: "m", Type: corev1.EventTypeNormal}
	if _, err := c.Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Errorf("Events().Create: %v", err)
	}
}

func TestReadyzAndVersion(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	if err := c.Readyz(ctx); err != nil {
		t.Errorf("Readyz: %v", err)
	}
	v, err := c.Version(ctx)
	want, err2 := env.Clusters[0].Clientset().Discovery().ServerVersion()
	if err != nil || err2 != nil || v != want.GitVersion {
		t.Errorf("Version = %q, %v; want %q (%v)", v, err, want.GitVersion, err2)
	}
}

// poll calls cond until it returns true, failing t with what and cond's
// last state after deadline.
func poll(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s (last: %s)", what, deadline, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
