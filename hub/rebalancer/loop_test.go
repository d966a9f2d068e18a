package rebalancer

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
	"github.com/tetherproj/tether/hub/view"
)

// waitTimeout bounds every poll.
const waitTimeout = 20 * time.Second

// env is a real embedded etcd, a view of it, and loops started on it.
type env struct {
	t   *testing.T
	ctx context.Context
	st  *store.Store
}

func newEnv(t *testing.T) *env {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	st, err := store.Open(ctx, store.Config{DataDir: t.TempDir()}, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return &env{t: t, ctx: ctx, st: st}
}

// start runs a view and a loop (a leader's term) until stop, which waits
// for both to return.
func (e *env) start() (stop func()) {
	ctx, cancel := context.WithCancel(e.ctx)
	v, err := view.New(e.st, view.HubPrefixes(), hclog.NewNullLogger())
	if err != nil {
		e.t.Fatalf("view.New: %v", err)
	}
	done := make(chan error, 2)
	go func() { done <- v.Run(ctx) }()
	<-v.Synced()
	go func() { done <- New(e.st, v, hclog.NewNullLogger()).Run(ctx) }()
	return func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				e.t.Errorf("Run = %v; want nil after cancel", err)
			}
		}
	}
}

func (e *env) put(key string, v any) int64 {
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	rev, err := e.st.Put(e.ctx, key, data)
	if err != nil {
		e.t.Fatalf("Put(%s): %v", key, err)
	}
	return rev
}

// poll waits until cond holds on the stored value of key (nil: absent).
func (e *env) poll(key string, what string, cond func(kv *store.KV) bool) store.KV {
	deadline := time.Now().Add(waitTimeout)
	for {
		kv, err := e.st.Get(e.ctx, key)
		var p *store.KV
		if err == nil {
			p = &kv
		} else if !errors.Is(err, store.ErrNotFound) {
			e.t.Fatalf("Get(%s): %v", key, err)
		}
		if cond(p) {
			return kv
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %v", what, waitTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func storedBinding(name string) *workv1alpha1.ResourceBinding {
	b := &workv1alpha1.ResourceBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "work.tether.io/v1alpha1", Kind: "ResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name + "-deployment"},
		Spec: workv1alpha1.ResourceBindingSpec{
			Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name},
			Replicas: 2,
			Clusters: []workv1alpha1.TargetCluster{{Name: "m1", Replicas: 2}},
		},
	}
	b.Status.AggregatedStatus = append(b.Status.AggregatedStatus, aggregated("m1"))
	return b
}

func stored(r *appsv1alpha1.WorkloadRebalancer) *appsv1alpha1.WorkloadRebalancer {
	r.TypeMeta = metav1.TypeMeta{APIVersion: "apps.tether.io/v1alpha1", Kind: "WorkloadRebalancer"}
	return r
}

func decodeRebalancer(t *testing.T, kv *store.KV) *appsv1alpha1.WorkloadRebalancer {
	r := &appsv1alpha1.WorkloadRebalancer{}
	if err := json.Unmarshal(kv.Value, r); err != nil {
		t.Fatalf("decode rebalancer: %v", err)
	}
	return r
}

// The loop triggers the binding of each named workload with the
// rebalancer's creationTimestamp (keeping the rest of the binding as
// stored), reports a missing one as Failed, finishes, and deletes the
// rebalancer after its TTL.
func TestLoopTriggersRecordsAndExpires(t *testing.T) {
	e := newEnv(t)
	bkey := BindingKey(ref("web"))
	e.put(bkey, storedBinding("web"))
	r := rebalancerOf("web", "ghost")
	ttl := int32(1)
	r.Spec.TTLSecondsAfterFinished = &ttl
	rkey := Prefix + "_/" + r.Name
	e.put(rkey, stored(r))
	stop := e.start()
	defer stop()

	kv := e.poll(bkey, "binding triggered", func(kv *store.KV) bool {
		b, err := workv1alpha1.Decode(kv.Value)
		return err == nil && b.Spec.RescheduleTriggeredAt != nil
	})
	b, _ := workv1alpha1.Decode(kv.Value)
	if !b.Spec.RescheduleTriggeredAt.Equal(&created) {
		t.Errorf("rescheduleTriggeredAt = %v; want the rebalancer's creationTimestamp %v", b.Spec.RescheduleTriggeredAt, created)
	}
	if len(b.Status.AggregatedStatus) != 1 || len(b.Spec.Clusters) != 1 {
		t.Errorf("binding after the trigger: clusters %v, items %v; want both kept", b.Spec.Clusters, b.Status.AggregatedStatus)
	}

	var finished *appsv1alpha1.WorkloadRebalancer
	e.poll(rkey, "rebalancer finished", func(kv *store.KV) bool {
		if kv == nil {
			t.Fatalf("rebalancer deleted before its status was seen")
		}
		finished = decodeRebalancer(t, kv)
		return finished.Status.FinishTime != nil
	})
	want := []appsv1alpha1.ObservedWorkload{
		{Workload: ref("ghost"), Result: appsv1alpha1.RebalanceFailed, Reason: appsv1alpha1.RebalanceObjectNotFound},
		{Workload: ref("web"), Result: appsv1alpha1.RebalanceSuccessful},
	}
	if got := finished.Status.ObservedWorkloads; len(got) != 2 || got[0] != want[0] || got[1] != want[1] || finished.Status.ObservedGeneration != 1 {
		t.Errorf("status = %+v; want %+v, observedGeneration 1", finished.Status, want)
	}
	e.poll(rkey, "rebalancer deleted after its TTL", func(kv *store.KV) bool { return kv == nil })
}

// A new leader's loop on a finished rebalancer writes nothing: the binding
// was triggered at the rebalancer's creation and its status is unchanged.
func TestLoopAfterLeaderChangeWritesNothing(t *testing.T) {
	e := newEnv(t)
	bkey := BindingKey(ref("web"))
	e.put(bkey, storedBinding("web"))
	r := rebalancerOf("web")
	rkey := Prefix + "_/" + r.Name
	e.put(rkey, stored(r))
	stop := e.start()
	e.poll(rkey, "rebalancer finished", func(kv *store.KV) bool {
		return kv != nil && decodeRebalancer(t, kv).Status.FinishTime != nil
	})
	stop()
	bRev := e.poll(bkey, "binding", func(kv *store.KV) bool { return kv != nil }).Revision
	rRev := e.poll(rkey, "rebalancer", func(kv *store.KV) bool { return kv != nil }).Revision

	// A probe sorted after r: once its status is written, the next term's
	// loop has looked at r (one full batch, keys in order).
	probe := rebalancerOf("ghost")
	probe.Name = "zz-probe"
	pkey := Prefix + "_/" + probe.Name
	e.put(pkey, stored(probe))

	stop = e.start() // the next term
	defer stop()
	e.poll(pkey, "probe looked at", func(kv *store.KV) bool {
		return kv != nil && decodeRebalancer(t, kv).Status.FinishTime != nil
	})
	if kv, _ := e.st.Get(e.ctx, bkey); kv.Revision != bRev {
		t.Errorf("binding rewritten by the next term (revision %d → %d)", bRev, kv.Revision)
	}
	if kv, _ := e.st.Get(e.ctx, rkey); kv.Revision != rRev {
		t.Errorf("rebalancer rewritten by the next term (revision %d → %d)", rRev, kv.Revision)
	}
}

func aggregated(cluster string) configv1alpha1.AggregatedStatusItem {
	return configv1alpha1.AggregatedStatusItem{ClusterName: cluster, Health: configv1alpha1.ResourceHealthy}
}

// A leader that triggered the binding and lost its term before writing
// the status: the next term records Successful without writing the
// binding again.
func TestLoopTriggeredBeforeLeaderChange(t *testing.T) {
	e := newEnv(t)
	bkey := BindingKey(ref("web"))
	b := storedBinding("web")
	b.Spec.RescheduleTriggeredAt = &created
	bRev := e.put(bkey, b)
	r := rebalancerOf("web")
	rkey := Prefix + "_/" + r.Name
	e.put(rkey, stored(r))
	stop := e.start()
	defer stop()
	kv := e.poll(rkey, "rebalancer finished", func(kv *store.KV) bool {
		return kv != nil && decodeRebalancer(t, kv).Status.FinishTime != nil
	})
	if got := decodeRebalancer(t, &kv).Status.ObservedWorkloads; len(got) != 1 || got[0].Result != appsv1alpha1.RebalanceSuccessful {
		t.Errorf("observedWorkloads = %+v; want web Successful", got)
	}
	if kv, _ := e.st.Get(e.ctx, bkey); kv.Revision != bRev {
		t.Errorf("binding written again (revision %d → %d); it was triggered at the rebalancer's creation", bRev, kv.Revision)
	}
}
