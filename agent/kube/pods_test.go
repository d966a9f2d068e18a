package kube

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// TestEachPod walks a PodList encoded as the API server encodes it.
func TestEachPod(t *testing.T) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{Continue: "next-token", ResourceVersion: "7"}}
	for _, name := range []string{"a", "b", "c"} {
		list.Items = append(list.Items, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: corev1.PodSpec{NodeName: "node-" + name, Containers: []corev1.Container{{Name: "main",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}}},
		})
	}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme, scheme).Encode(list, &buf); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()
	var got []string
	next, err := eachPod(body, func(p *corev1.Pod) {
		got = append(got, p.Namespace+"/"+p.Name+" "+p.Spec.NodeName+" "+p.Spec.Containers[0].Resources.Requests.Cpu().String())
	})
	if err != nil {
		t.Fatalf("eachPod: %v", err)
	}
	want := []string{"ns/a node-a 250m", "ns/b node-b 250m", "ns/c node-c 250m"}
	if diff := cmp.Diff(want, got); diff != "" || next != "next-token" {
		t.Errorf("eachPod = %q, continue %q; want %q, next-token (-want +got):\n%s", got, next, want, diff)
	}
	for _, bad := range [][]byte{nil, []byte("{}"), append(append([]byte{}, protobufMagic...), 0x12, 0x05, 0x01)} {
		if _, err := eachPod(bad, func(*corev1.Pod) {}); err == nil {
			t.Errorf("eachPod(%q) = nil error; want one", bad)
		}
	}
}

// TestPodPage lists the member's pods page by page, as capacity does.
func TestPodPage(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	pods := env.Clusters[0].Clientset().CoreV1().Pods("default")
	for i := range 3 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("page-%d", i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx"}}}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = pods.Delete(context.Background(), p.Name, metav1.DeleteOptions{}) })
	}
	want, err := env.Clusters[0].Clientset().CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	opts := metav1.ListOptions{Limit: 1}
	for {
		next, err := c.PodPage(ctx, opts, func(p *corev1.Pod) { got = append(got, p.Namespace+"/"+p.Name) })
		if err != nil {
			t.Fatalf("PodPage: %v", err)
		}
		if opts.Continue = next; next == "" {
			break
		}
	}
	if len(want.Items) < 3 {
		t.Fatalf("the member lists %d pods; want the 3 created", len(want.Items))
	}
	var names []string
	for _, p := range want.Items {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("pods by PodPage (-client-go +got):\n%s", diff)
	}
}
