package faults_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/test/proc"
)

// seqAnnotation carries the number of an apply in hubKilledDuringApplies.
const seqAnnotation = "faults.tether.io/seq"

// applyPause is the pause between two applies of applyLoop, and between
// two tries while the hub is away.
const applyPause = 200 * time.Millisecond

// applyLoop applies nginx's template with seqAnnotation 1, 2, … until stop
// is closed, then once more, and returns the last number committed, which
// it also keeps in applied. Applies that fail (the hub is down) are tried
// again.
func (x *fixture) applyLoop(ctx context.Context, stop <-chan struct{}, applied *atomic.Int64) int {
	seq, stopping := 1, false
	for ctx.Err() == nil {
		select {
		case <-stop:
			stopping = true
		default:
		}
		if err := x.applySeq(ctx, seq); err != nil {
			time.Sleep(applyPause)
			continue
		}
		applied.Store(int64(seq))
		if stopping {
			return seq
		}
		seq++
		time.Sleep(applyPause)
	}
	return int(applied.Load())
}

// applySeq applies nginx's template as the hub has it with seqAnnotation
// set to seq.
func (x *fixture) applySeq(ctx context.Context, seq int) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	obj, err := x.client.Get(cctx, nginxRef)
	if err != nil {
		return err
	}
	tmpl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind(),
		"metadata": map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace(), "labels": obj.GetLabels(),
			"annotations": map[string]any{seqAnnotation: strconv.Itoa(seq)}},
		"spec": obj.Object["spec"],
	}}
	b, err := tmpl.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = x.client.Apply(cctx, b)
	return err
}

// waitApplies waits until applyLoop has committed n applies.
func waitApplies(ctx context.Context, t *testing.T, applied *atomic.Int64, n int64) {
	err := proc.Poll(ctx, applyPause, func(context.Context) error {
		if got := applied.Load(); got < n {
			return fmt.Errorf("%d applies committed", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitAnnotation waits until nginx carries seqAnnotation seq in every
// member that has it.
func (x *fixture) waitAnnotation(ctx context.Context, seq int) {
	want := strconv.Itoa(seq)
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		for _, c := range x.fleet.Kit.Clusters {
			d, err := c.Dynamic().Resource(deployments).Namespace("default").Get(ctx, "nginx", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			if got := d.GetAnnotations()[seqAnnotation]; got != want {
				return fmt.Errorf("%s: nginx %s=%q; want %q", c.Name, seqAnnotation, got, want)
			}
		}
		return nil
	})
	if err != nil {
		x.t.Errorf("the last apply (%d) did not reach the members: %v", seq, err)
	}
}

// waitObject waits until every member holds the object of res called name
// in namespace default.
func (x *fixture) waitObject(ctx context.Context, res schema.GroupVersionResource, name string) {
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		for _, c := range x.fleet.Kit.Clusters {
			if _, err := c.Dynamic().Resource(res).Namespace("default").Get(ctx, name, metav1.GetOptions{}); err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		x.t.Fatalf("%s %s not in every member: %v", res.Resource, name, err)
	}
}

// waitReady waits until the hub reports every cluster Ready.
func waitReady(ctx context.Context, t *testing.T, x *fixture) {
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		ready, err := x.client.ReadyClusters(ctx)
		if err != nil {
			return err
		}
		if len(ready) != len(x.names) {
			return fmt.Errorf("clusters Ready: %v", ready)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// newerPlacement is a ConfigMap placed in every cluster, applied after the
// snapshot storeRestored restores.
const newerPlacement = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: faults-newer
data: {placed: after-the-snapshot}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: faults-newer
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    name: faults-newer
  placement:
    replicaScheduling:
      replicaSchedulingType: Duplicated
`
