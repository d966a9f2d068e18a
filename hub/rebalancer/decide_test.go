package rebalancer

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
)

var created = metav1.NewTime(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))

func ref(name string) appsv1alpha1.ObjectReference {
	return appsv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name}
}

func rebalancerOf(names ...string) *appsv1alpha1.WorkloadRebalancer {
	r := &appsv1alpha1.WorkloadRebalancer{ObjectMeta: metav1.ObjectMeta{Name: "r", CreationTimestamp: created, Generation: 1}}
	for _, n := range names {
		r.Spec.Workloads = append(r.Spec.Workloads, ref(n))
	}
	return r
}

func TestDecide(t *testing.T) {
	before, after := metav1.NewTime(created.Add(-time.Hour)), metav1.NewTime(created.Add(time.Second))
	bindings := map[string]struct {
		at      *metav1.Time
		unknown bool
	}{"never": {}, "old": {at: &before}, "done": {at: &after}, "same": {at: &created}, "broken": {unknown: true}}
	lookup := func(w appsv1alpha1.ObjectReference) (*metav1.Time, bool, bool) {
		b, ok := bindings[w.Name]
		return b.at, ok, b.unknown
	}
	p := Decide(rebalancerOf("never", "old", "done", "same", "missing", "broken"), lookup)
	got := map[string]string{}
	for _, o := range p.Observed {
		got[o.Workload.Name] = string(o.Result) + "/" + string(o.Reason)
	}
	for _, i := range p.Trigger {
		got[p.Observed[i].Workload.Name] = "trigger"
	}
	want := map[string]string{
		"never": "trigger", "old": "trigger", // not triggered since the rebalancer was created
		"done": "Successful/", "same": "Successful/", // triggered at or after: nothing to write again
		"missing": "Failed/ReferencedBindingNotFound",
		"broken":  "/", // unknown: pending, retried
	}
	if diff := cmp.Diff(want, got); diff != "" || p.Unknown != 1 {
		t.Errorf("Decide (-want +got):\n%s\nunknown = %d; want 1", diff, p.Unknown)
	}
}

func TestStatus(t *testing.T) {
	now := created.Add(time.Minute)
	r := rebalancerOf("a")
	done := []appsv1alpha1.ObservedWorkload{{Workload: ref("a"), Result: appsv1alpha1.RebalanceSuccessful}}

	s, changed := Status(r, done, 1, now)
	if !changed || s.FinishTime != nil || s.ObservedGeneration != 1 {
		t.Errorf("Status(retry 1) = %+v, %v; want changed, no finishTime, generation 1", s, changed)
	}
	s, changed = Status(r, done, 0, now)
	if !changed || s.FinishTime == nil || !s.FinishTime.Time.Equal(now) {
		t.Errorf("Status(done) = %+v, %v; want changed, finishTime %v", s, changed, now)
	}
	r.Status = s
	if s2, changed := Status(r, done, 0, now.Add(time.Hour)); changed || !s2.FinishTime.Equal(s.FinishTime) {
		t.Errorf("Status(again) = %+v, %v; want unchanged, the stored finishTime kept (a new leader writes nothing)", s2, changed)
	}
}

func TestPatchJSONKeepsOtherFields(t *testing.T) {
	stored := `{"metadata":{"name":"b"},"spec":{"clusters":[{"name":"m1","replicas":2}],"replicas":2},"status":{"aggregatedStatus":[{"clusterName":"m1","health":"Healthy"}]}}`
	out, err := patchJSON([]byte(stored), "spec", "rescheduleTriggeredAt", &created)
	if err != nil {
		t.Fatalf("patchJSON: %v", err)
	}
	var got, want map[string]any
	_ = json.Unmarshal(out, &got)
	_ = json.Unmarshal([]byte(stored), &want)
	want["spec"].(map[string]any)["rescheduleTriggeredAt"] = "2026-01-01T10:00:00Z"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patchJSON (-want +got):\n%s", diff)
	}
}

func TestBindingKey(t *testing.T) {
	tests := []struct {
		w    appsv1alpha1.ObjectReference
		want string
	}{
		{ref("web"), "/tether/bindings/apps/Deployment/default/web"},
		{appsv1alpha1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "ns1"}, "/tether/bindings/core/Namespace/_/ns1"},
	}
	for _, tt := range tests {
		if got := BindingKey(tt.w); got != tt.want {
			t.Errorf("BindingKey(%v) = %q; want %q", tt.w, got, tt.want)
		}
	}
}

func TestTriggerAt(t *testing.T) {
	sameSecond := metav1.NewTime(created.Add(400 * time.Millisecond))
	later := metav1.NewTime(created.Add(5 * time.Second))
	earlier := metav1.NewTime(created.Add(-time.Minute))
	tests := []struct {
		name string
		last *metav1.Time
		want time.Time
	}{
		{"never scheduled", nil, created.Time},
		{"scheduled before", &earlier, created.Time},
		{"scheduled in the same second", &sameSecond, created.Add(time.Second)},
		{"scheduled after", &later, created.Add(6 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TriggerAt(created, tt.last)
			if !got.Time.Equal(tt.want) {
				t.Errorf("TriggerAt(%v, %v) = %v; want %v", created, tt.last, got, tt.want)
			}
			// The scheduler's rule (placement.RescheduleTriggered), on
			// times as stored (to the second).
			if tt.last != nil && !got.After(tt.last.Time.Truncate(time.Second)) {
				t.Errorf("TriggerAt = %v is not after the last schedule %v: the scheduler would ignore it", got, tt.last)
			}
		})
	}
}
