package ha_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/proc"
)

// drainKey is the NoExecute taint the grace scenario drains a cluster
// with; the baseline's policies tolerate it, so only drainedName leaves.
const drainKey = "drain.test.tether.io"

// drainedName is the Deployment the grace scenario evicts.
const drainedName = "ha-drained"

// evictionGrace is the replicas' --graceful-eviction-timeout in the grace
// scenario: long enough to kill the leader half way and have a new one
// acting well before the end (newLeaderBound).
const evictionGrace = 60 * time.Second

// graceLate is how long after the grace's end the drained copy may go:
// the new leader's recheck, the renderer, the agent's delete, on a loaded
// machine. A grace started over by the new leader would end more than
// evictionGrace/2 later.
const graceLate = 20 * time.Second

// drainedYAML places drainedName on cluster alone, with no toleration of
// drainKey: a NoExecute taint evicts it, with nowhere else to go, so its
// eviction task keeps the copy for the whole grace.
func drainedYAML(cluster string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: default, labels: {app: %[1]s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: nginx:1.27}]}
---
apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [%[2]s]}}
`, drainedName, cluster)
}

// leaderKilledMidGrace drains a cluster with a NoExecute taint, kills the
// leader (kill -9) half way through the eviction's grace, and checks that
// the new leader ends the grace at its original deadline: the drained copy
// stays until then (it is the only delete, and none comes earlier) and
// goes within graceLate of it, not one grace after the leader change. The
// baseline keeps its UIDs and generations.
func leaderKilledMidGrace(t *testing.T) {
	x := newFixture(t, options{hubArgs: []string{"--graceful-eviction-timeout", evictionGrace.String()}})
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	drained := x.kit.Clusters[0]
	x.apply(ctx, drainedYAML(drained.Name))
	uid := x.waitDrainedPresent(ctx)
	b := x.snapshot(ctx)
	_, err := x.clients[0].Clusters.Taint(ctx, &hubv1.TaintRequest{Name: drained.Name,
		Add: []*hubv1.Taint{{Key: drainKey, Value: "now", Effect: hubv1.TaintEffect_TAINT_EFFECT_NO_EXECUTE}}})
	if err != nil {
		t.Fatal(err)
	}
	taintedAt := time.Now()
	deadline := taintedAt.Add(evictionGrace)
	if err := sleepUntil(ctx, taintedAt.Add(evictionGrace/2)); err != nil {
		t.Fatal(err)
	}
	if err := x.drainedHasUID(ctx, uid); err != nil {
		t.Fatalf("half way through the grace: %v", err)
	}
	killedAt := time.Now()
	x.hubs[0].Kill()
	_, actingAfter, next := x.measureLeaderChange(ctx, killedAt, 0)
	if next < 0 {
		t.FailNow()
	}
	goneAt, err := x.waitDrainedGone(ctx, uid, deadline.Add(2*graceLate))
	if err != nil {
		t.Fatal(err)
	}
	o := x.graceChecks(ctx, b)
	t.Logf("FIGURES %s: grace=%s new_leader=hub-%d leader_acting_after=%s killed_after=%s drained_gone_after=%s (deadline %s) uid_changes=%d other_deletes=%d",
		t.Name(), evictionGrace, next, fig(actingAfter), fig(killedAt.Sub(taintedAt)), fig(goneAt.Sub(taintedAt)), evictionGrace, o.uidChanges, o.deletes)
	if early := deadline.Add(-time.Second); goneAt.Before(early) {
		t.Errorf("the drained copy went %s after the taint; want not before the grace's end, %s", fig(goneAt.Sub(taintedAt)), evictionGrace)
	}
	if goneAt.After(deadline.Add(graceLate)) {
		t.Errorf("the drained copy went %s after the taint; want within %s of the grace's end (%s): the new leader started the grace over",
			fig(goneAt.Sub(taintedAt)), graceLate, evictionGrace)
	}
}

// sleepUntil waits until at or ctx's end.
func sleepUntil(ctx context.Context, at time.Time) error {
	select {
	case <-time.After(time.Until(at)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitDrainedPresent waits for drainedName in the first member and returns
// its UID.
func (x *fixture) waitDrainedPresent(ctx context.Context) (uid string) {
	c := x.kit.Clusters[0].Dynamic().Resource(deployments).Namespace("default")
	err := proc.Poll(ctx, time.Second, func(ctx context.Context) error {
		d, err := c.Get(ctx, drainedName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		uid = string(d.GetUID())
		return nil
	})
	if err != nil {
		x.t.Fatalf("%s not in %s: %v", drainedName, x.kit.Clusters[0].Name, err)
	}
	return uid
}

// drainedHasUID says why drainedName is not in the first member with uid.
func (x *fixture) drainedHasUID(ctx context.Context, uid string) error {
	d, err := x.kit.Clusters[0].Dynamic().Resource(deployments).Namespace("default").Get(ctx, drainedName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", drainedName, err)
	}
	if string(d.GetUID()) != uid {
		return fmt.Errorf("%s has UID %s, was %s", drainedName, d.GetUID(), uid)
	}
	return nil
}

// waitDrainedGone polls drainedName in the first member every 200 ms until
// it is gone, and returns when it was first seen gone; it fails when it
// is still there at until, or was replaced (another UID).
func (x *fixture) waitDrainedGone(ctx context.Context, uid string, until time.Time) (time.Time, error) {
	c := x.kit.Clusters[0].Dynamic().Resource(deployments).Namespace("default")
	for {
		d, err := c.Get(ctx, drainedName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return time.Now(), nil
		case err != nil:
			return time.Time{}, err
		case string(d.GetUID()) != uid:
			return time.Time{}, fmt.Errorf("%s re-created with UID %s (was %s)", drainedName, d.GetUID(), uid)
		case time.Now().After(until):
			return time.Time{}, fmt.Errorf("%s still in %s %s after the grace's end", drainedName, x.kit.Clusters[0].Name, fig(time.Since(until)))
		}
		if err := sleepUntil(ctx, time.Now().Add(200*time.Millisecond)); err != nil {
			return time.Time{}, err
		}
	}
}

// graceChecks are check's assertions without a load: the baseline's
// placement, generations and UIDs, no delete the watcher saw, and no
// delete by an agent but the drained cluster's one.
func (x *fixture) graceChecks(ctx context.Context, b baseline) outcome {
	t := x.t
	var o outcome
	if g, err := x.webGenerations(ctx); err != nil {
		t.Error(err)
	} else {
		for c, gen := range b.generations {
			if g[c] != gen {
				t.Errorf("%s's spec changed in %s: generation %d, was %d", webName, c, g[c], gen)
			}
		}
	}
	o.uidChanges = x.checkUIDs(b)
	for _, d := range x.watch.Deletes() {
		t.Errorf("spurious delete %s at %s (%s)", d.Object, d.At.Format(time.RFC3339Nano), d.How)
		o.deletes++
	}
	for i, a := range x.agents {
		v, err := a.deletes(ctx)
		if err != nil {
			t.Error(err)
			continue
		}
		want := 0.0
		if a.cluster == x.kit.Clusters[0].Name {
			want = 1 // the drained copy, at the grace's end
		}
		if v != want {
			t.Errorf("agent %d (%s) deleted or evicted %v objects in its member; want %v", i, a.cluster, v, want)
		}
		o.deletes += int(v - want)
	}
	return o
}
