package faults_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tetherproj/tether/test/manifests"
	"github.com/tetherproj/tether/test/proc"
)

// rolledName is the Deployment rolloutPartitioned rolls out.
const rolledName = "rolled"

// rolloutProgress bounds how long the rollout may take on the two
// reachable clusters (applied and soaked 5 s each, on a loaded machine):
// well under its progressDeadline, so that a rollout that waited for the
// partitioned cluster instead of skipping it could not pass.
const rolloutProgress = 2 * time.Minute

// rolledYAML is rolledName with image on the three clusters, one at a
// time, soaked 5 s, with 5 minutes each to get there.
func rolledYAML(image string) string {
	return manifests.Rolled(rolledName, image, []string{"edge-1", "edge-2", "regional-1"}, 5*time.Second, 5*time.Minute)
}

// rolloutPartitioned: a Progressive rollout while edge-1 (first in the
// rollout's order) is cut off the hub by iptables. It is skipped: the two
// other clusters take the new image within rolloutProgress (far less than
// the progressDeadline a rollout waiting for it would spend), edge-1 keeps
// its old one, and once healed it catches up. No member object is
// deleted or re-created, the examples' included.
func rolloutPartitioned(t *testing.T, x *fixture) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if _, err := x.client.Apply(ctx, []byte(rolledYAML("nginx:1.27"))); err != nil {
		t.Fatal(err)
	}
	x.waitImages(ctx, rolloutProgress, map[string]string{"edge-1": "nginx:1.27", "edge-2": "nginx:1.27", "regional-1": "nginx:1.27"})
	uids := x.rolledUIDs(ctx)
	r := x.begin(t.Name())
	if err := x.net.Partition("edge-1"); err != nil {
		t.Fatal(err)
	}
	x.waitNotReady(ctx, r, "edge-1")
	if _, err := x.client.Apply(ctx, []byte(rolledYAML("nginx:1.28"))); err != nil {
		t.Fatal(err)
	}
	x.waitImages(ctx, rolloutProgress, map[string]string{"edge-1": "nginx:1.27", "edge-2": "nginx:1.28", "regional-1": "nginx:1.28"})
	if err := x.net.Heal("edge-1"); err != nil {
		t.Fatal(err)
	}
	r.healed()
	x.waitImages(ctx, rolloutProgress, map[string]string{"edge-1": "nginx:1.28", "edge-2": "nginx:1.28", "regional-1": "nginx:1.28"})
	t.Logf("edge-1 took nginx:1.28 %s after the heal", time.Since(r.healAt).Round(100*time.Millisecond))
	r.converge()
	r.finish()
	for c, uid := range x.rolledUIDs(ctx) {
		if uid != uids[c] {
			t.Errorf("%s in %s: uid %s, was %s; want it never deleted or re-created", rolledName, c, uid, uids[c])
		}
	}
}

// waitNotReady waits until the hub calls cluster other than Ready.
func (x *fixture) waitNotReady(ctx context.Context, r *run, cluster string) {
	err := proc.Poll(ctx, time.Second, func(context.Context) error {
		r.observeStates()
		if _, ok := r.unknownAt[cluster]; !ok {
			return fmt.Errorf("%s still Ready on the hub", cluster)
		}
		return nil
	})
	if err != nil {
		x.t.Fatal(err)
	}
}

// waitImages waits until rolledName has, in each member, the image want
// names, ready, reading the members' API servers directly; edge-1's may
// be unreadable while it is cut off (its want then holds for what was
// last read).
func (x *fixture) waitImages(ctx context.Context, limit time.Duration, want map[string]string) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err := proc.Poll(ctx, 500*time.Millisecond, func(ctx context.Context) error {
		var wrong []string
		for c, image := range want {
			got, ready, err := x.rolledImage(ctx, c)
			if err != nil {
				return err
			}
			if got != image || !ready {
				wrong = append(wrong, fmt.Sprintf("%s: %s ready=%v, want %s", c, got, ready, image))
			}
		}
		if len(wrong) > 0 {
			return fmt.Errorf("%s", strings.Join(wrong, "; "))
		}
		return nil
	})
	if err != nil {
		x.t.Fatalf("%s not as wanted within %s: %v", rolledName, limit, err)
	}
}

// rolledImage is rolledName's image in cluster and whether it is ready
// with it.
func (x *fixture) rolledImage(ctx context.Context, cluster string) (image string, ready bool, err error) {
	d, err := x.fleet.Kit.Cluster(cluster).Dynamic().Resource(deployments).Namespace("default").Get(ctx, rolledName, metav1.GetOptions{})
	if err != nil {
		return "", false, err
	}
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) > 0 {
		image, _, _ = unstructured.NestedString(cs[0].(map[string]any), "image")
	}
	n, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
	observed, _, _ := unstructured.NestedInt64(d.Object, "status", "observedGeneration")
	return image, n >= 1 && observed == d.GetGeneration(), nil
}

// rolledUIDs are rolledName's UIDs by member.
func (x *fixture) rolledUIDs(ctx context.Context) map[string]string {
	out := map[string]string{}
	for _, c := range x.names {
		d, err := x.fleet.Kit.Cluster(c).Dynamic().Resource(deployments).Namespace("default").Get(ctx, rolledName, metav1.GetOptions{})
		if err != nil {
			x.t.Fatalf("%s in %s: %v", rolledName, c, err)
		}
		out[c] = string(d.GetUID())
	}
	return out
}
