package capacity_test

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/tetherproj/tether/agent/capacity"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/test/kit"
)

// nodes are the shared cluster's kwok nodes.
var nodes = []kit.NodeSpec{
	{Name: "big", CPU: "8", Memory: "16Gi", Pods: "110", Labels: map[string]string{"pool": "a"}},
	{Name: "small", CPU: "4", Memory: "8Gi", Pods: "110", Labels: map[string]string{"pool": "b"}},
}

const deadline = 30 * time.Second

func newMeter(t *testing.T) *capacity.Meter {
	t.Helper()
	m, err := capacity.New(capacity.Config{RESTConfig: env.Clusters[0].RESTConfig(), NodeGroupLabel: "pool"}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// eventually polls cond until it returns nil or the deadline passes.
func eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for {
		err := cond(ctx)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %v: %v", what, deadline, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestHeartbeat(t *testing.T) {
	m := newMeter(t)
	ctx := context.Background()
	hb, err := m.Heartbeat(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := hb.GetResourceSummary()
	if got := s.GetAllocatable(); got["cpu"] != "12" || got["memory"] != "24Gi" || got["pods"] != "220" {
		t.Errorf("allocatable = %v; want the kwok nodes' capacity cpu 12, memory 24Gi, pods 220", got)
	}
	if len(s.GetNodeGroups()) != 2 || s.GetNodeGroups()[0].GetAllocatable()["cpu"] != "8" {
		t.Errorf("node groups = %v; want pool a (cpu 8) and pool b", s.GetNodeGroups())
	}
	if !served(hb, "apps/v1", "Deployment") {
		t.Errorf("API enablements lack apps/v1 Deployment: %v", hb.GetApiEnablements())
	}
	if hb.GetKubernetesVersion() == "" || len(hb.GetConditions()) != 1 ||
		hb.GetConditions()[0].GetStatus() != agentv1.ConditionStatus_CONDITION_STATUS_TRUE {
		t.Errorf("version %q conditions %v; want a version and Ready True", hb.GetKubernetesVersion(), hb.GetConditions())
	}
}

func served(hb *agentv1.Heartbeat, gv, kind string) bool {
	for _, e := range hb.GetApiEnablements() {
		for _, r := range e.GetResources() {
			if e.GetGroupVersion() == gv && r.GetKind() == kind {
				return true
			}
		}
	}
	return false
}

// TestAllocatedGrows: scheduled pods' requests count as allocated.
func TestAllocatedGrows(t *testing.T) {
	m := newMeter(t)
	ctx := context.Background()
	before, err := m.Summary(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	createDeployment(t, "load", 3, "500m", "1Gi")
	eventually(t, "three pods allocated", func(ctx context.Context) error {
		s, err := m.Summary(ctx, nil)
		if err != nil {
			return err
		}
		want := map[string]string{"cpu": plus(before.GetAllocated()["cpu"], "1500m"), "memory": plus(before.GetAllocated()["memory"], "3Gi"),
			"pods": plus(before.GetAllocated()["pods"], "3")}
		for k, v := range want {
			if s.GetAllocated()[k] != v {
				return fmt.Errorf("allocated = %v; want %v", s.GetAllocated(), want)
			}
		}
		return nil
	})
}

// TestPodListPaged: a pod list of several pages sums what one page does.
func TestPodListPaged(t *testing.T) {
	var pages atomic.Int32
	cfg := rest.CopyConfig(env.Clusters[0].RESTConfig())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("limit") == "2" {
				pages.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	paged, err := capacity.New(capacity.Config{RESTConfig: cfg, NodeGroupLabel: "pool", PodPage: 2}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	whole := newMeter(t)
	createDeployment(t, "paged", 5, "100m", "1Mi")
	eventually(t, "paged and whole lists agree with five pods or more", func(ctx context.Context) error {
		pages.Store(0)
		got, err := paged.Summary(ctx, nil)
		if err != nil {
			return err
		}
		want, err := whole.Summary(ctx, nil)
		if err != nil {
			return err
		}
		n := resource.MustParse(want.GetAllocated()["pods"])
		if n.Value() < 5 || got.String() != want.String() || pages.Load() < 3 {
			return fmt.Errorf("paged (%d requests) %v; whole %v", pages.Load(), got, want)
		}
		return nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func plus(a, b string) string {
	q := resource.MustParse(b)
	if a != "" {
		p := resource.MustParse(a)
		p.Add(q)
		q = p
	}
	return q.String()
}

func createDeployment(t *testing.T, name string, replicas int32, cpu, mem string) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "main", Image: "nginx",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}},
				}}},
			},
		},
	}
	if _, err := env.Clusters[0].Clientset().AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestCordonedNodeLeftOut: a cordoned node's capacity does not count.
func TestCordonedNodeLeftOut(t *testing.T) {
	m := newMeter(t)
	ctx := context.Background()
	nodesAPI := env.Clusters[0].Clientset().CoreV1().Nodes()
	patch := func(unschedulable bool) {
		body := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)
		if _, err := nodesAPI.Patch(ctx, "small", "application/merge-patch+json", []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch(true)
	defer patch(false)
	s, err := m.Summary(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.GetAllocatable()["cpu"]; got != "8" {
		t.Fatalf("allocatable cpu with node small cordoned = %s; want 8", got)
	}
}

// TestNewCRDServedSoon: a kind whose CRD is installed after the meter's
// first heartbeat is in the enablements within a heartbeat interval
// (10 s), so the hub can schedule it without waiting minutes.
func TestNewCRDServedSoon(t *testing.T) {
	m, err := capacity.New(capacity.Config{RESTConfig: env.Clusters[0].RESTConfig()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.Heartbeat(ctx, nil); err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	crds := env.Clusters[0].Dynamic().Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "widgets.example.com", metav1.DeleteOptions{}) })
	const heartbeatInterval = 10 * time.Second // the hub's default
	limit := time.Now().Add(heartbeatInterval)
	for {
		hb, err := m.Heartbeat(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if served(hb, "example.com/v1", "Widget") {
			return
		}
		if time.Now().After(limit) {
			t.Fatalf("example.com/v1 Widget not in the enablements %s after its CRD was created; want it within a heartbeat interval", heartbeatInterval)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
