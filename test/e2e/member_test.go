package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/tetherproj/tether/test/kit"
)

// memberWait bounds the wait for something to happen in a member cluster
// after its cause (an Apply on the hub, an edit in the member): the hub's
// pipeline and the agent's apply take milliseconds; the margin is for a
// loaded CI machine.
const memberWait = 60 * time.Second

var (
	cloneSetGVR = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}
	crdGVR      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// waitDeployment polls the Deployment default/name of c until cond holds.
func waitDeployment(t testing.TB, c *kit.Cluster, name, what string, cond func(*appsv1.Deployment) (bool, string)) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	poll(t, memberWait, fmt.Sprintf("%s: deployment %s: %s", c.Name, name, what), func() (bool, string) {
		var err error
		d, err = c.Clientset().AppsV1().Deployments("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cond(d)
	})
	return d
}

// deploymentIs is a condition on a Deployment's replicas, image and ready
// replicas (-1: any).
func deploymentIs(replicas int32, image string, ready int32) func(*appsv1.Deployment) (bool, string) {
	return func(d *appsv1.Deployment) (bool, string) {
		got := fmt.Sprintf("replicas %d, image %s, ready %d", ptrValue(d.Spec.Replicas), d.Spec.Template.Spec.Containers[0].Image, d.Status.ReadyReplicas)
		return ptrValue(d.Spec.Replicas) == replicas && d.Spec.Template.Spec.Containers[0].Image == image &&
			(ready < 0 || d.Status.ReadyReplicas == ready), got
	}
}

// editDeployment changes the Deployment default/name of c as another
// writer would (kubectl edit, an HPA), retrying on conflicts.
func editDeployment(t testing.TB, c *kit.Cluster, name string, edit func(*appsv1.Deployment)) {
	t.Helper()
	deps := c.Clientset().AppsV1().Deployments("default")
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deps.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(d)
		_, err = deps.Update(context.Background(), d, metav1.UpdateOptions{FieldManager: "e2e-editor"})
		return err
	})
	if err != nil {
		t.Fatalf("%s: edit deployment %s: %v", c.Name, name, err)
	}
}

// installCRD creates the CRD in testdata/file in c and waits until it is
// Established and served.
func installCRD(t testing.TB, c *kit.Cluster, file string) {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON(data); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	ctx := context.Background()
	if _, err := c.Dynamic().Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: create CRD %s: %v", c.Name, crd.GetName(), err)
	}
	poll(t, memberWait, c.Name+": CRD "+crd.GetName()+" established", func() (bool, string) {
		got, err := c.Dynamic().Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, ""
			}
		}
		return false, fmt.Sprint(conds)
	})
}

// waitCloneSet polls the CloneSet default/name of c until cond holds.
func waitCloneSet(t testing.TB, c *kit.Cluster, name, what string, cond func(*unstructured.Unstructured) (bool, string)) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	poll(t, memberWait, fmt.Sprintf("%s: cloneset %s: %s", c.Name, name, what), func() (bool, string) {
		var err error
		u, err = c.Dynamic().Resource(cloneSetGVR).Namespace("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cond(u)
	})
	return u
}

// cloneSetIs is a condition on a CloneSet's replicas and first image.
func cloneSetIs(replicas int64, image string) func(*unstructured.Unstructured) (bool, string) {
	return func(u *unstructured.Unstructured) (bool, string) {
		r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		img := firstImage(u)
		return r == replicas && img == image, fmt.Sprintf("replicas %d, image %s", r, img)
	}
}

// firstImage is the image of the first container of a workload's Pod
// template.
func firstImage(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		return ""
	}
	img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
	return img
}

// editCloneSet changes the CloneSet default/name of c as another writer
// would, retrying on conflicts; with status it writes the status
// subresource (what the Kruise controller would do).
func editCloneSet(t testing.TB, c *kit.Cluster, name string, status bool, edit func(*unstructured.Unstructured)) {
	t.Helper()
	res := c.Dynamic().Resource(cloneSetGVR).Namespace("default")
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(u)
		if status {
			_, err = res.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: "e2e-kruise"})
		} else {
			_, err = res.Update(ctx, u, metav1.UpdateOptions{FieldManager: "e2e-editor"})
		}
		return err
	})
	if err != nil {
		t.Fatalf("%s: edit cloneset %s (status %v): %v", c.Name, name, status, err)
	}
}

// setFirstImage sets the image of the first container of a workload.
func setFirstImage(u *unstructured.Unstructured, image string) {
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = image
	_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
