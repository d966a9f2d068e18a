package v1alpha1_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/api/apps/v1alpha1"
	"github.com/tetherproj/tether/api/codec"
)

// karmadaDoc is Karmada's tutorial rebalancer, as a Karmada user writes it.
const karmadaDoc = `apiVersion: apps.karmada.io/v1alpha1
kind: WorkloadRebalancer
metadata:
  name: demo
spec:
  workloads:
  - apiVersion: apps/v1
    kind: Deployment
    name: demo-deploy-1
    namespace: default
  - apiVersion: apps/v1
    kind: Deployment
    name: demo-deploy-2
    namespace: default
  ttlSecondsAfterFinished: 60
`

func TestDecodeKarmadaRebalancer(t *testing.T) {
	obj, err := codec.Decode([]byte(karmadaDoc))
	if err != nil {
		t.Fatalf("Decode(karmada rebalancer) = %v; want no error", err)
	}
	r, ok := obj.(*v1alpha1.WorkloadRebalancer)
	if !ok {
		t.Fatalf("Decode gave %T; want *WorkloadRebalancer", obj)
	}
	r.SetDefaults()
	if errs := r.Validate(); len(errs) > 0 {
		t.Fatalf("Validate() = %v; want none", errs)
	}
	if len(r.Spec.Workloads) != 2 || *r.Spec.TTLSecondsAfterFinished != 60 || r.Spec.Workloads[1].Name != "demo-deploy-2" {
		t.Errorf("decoded spec = %+v", r.Spec)
	}
	if !codec.Canonical(r) || r.APIVersion != "apps.tether.io/v1alpha1" {
		t.Errorf("Canonical gave apiVersion %q; want apps.tether.io/v1alpha1", r.APIVersion)
	}
	if info, _ := codec.Lookup("apps.karmada.io/v1alpha1", "WorkloadRebalancer"); info == nil || info.Namespaced {
		t.Errorf("Lookup(WorkloadRebalancer) = %+v; want a cluster-scoped kind", info)
	}
}

// Unsupported fields are refused at decode, naming the field.
func TestDecodeRefusesUnknownFields(t *testing.T) {
	tests := []struct{ name, doc, field string }{
		{"spec", strings.Replace(karmadaDoc, "  ttlSecondsAfterFinished: 60", "  ttlSecondsAfterFinished: 60\n  paused: true", 1), "spec.paused"},
		{"workload", strings.Replace(karmadaDoc, "    name: demo-deploy-1", "    name: demo-deploy-1\n    uid: x", 1), "spec.workloads[0].uid"},
		{"ttl type", strings.Replace(karmadaDoc, "ttlSecondsAfterFinished: 60", "ttlSecondsAfterFinished: soon", 1), "spec.ttlSecondsAfterFinished"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := codec.Decode([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("Decode = %v; want an error naming %s", err, tt.field)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	ttl := int32(-1)
	tests := []struct {
		name  string
		edit  func(r *v1alpha1.WorkloadRebalancer)
		field string
	}{
		{"no workloads", func(r *v1alpha1.WorkloadRebalancer) { r.Spec.Workloads = nil }, "spec.workloads"},
		{"no kind", func(r *v1alpha1.WorkloadRebalancer) { r.Spec.Workloads[0].Kind = "" }, "spec.workloads[0].kind"},
		{"no name", func(r *v1alpha1.WorkloadRebalancer) { r.Spec.Workloads[0].Name = "" }, "spec.workloads[0].name"},
		{"no apiVersion", func(r *v1alpha1.WorkloadRebalancer) { r.Spec.Workloads[0].APIVersion = "" }, "spec.workloads[0].apiVersion"},
		{"bad apiVersion", func(r *v1alpha1.WorkloadRebalancer) { r.Spec.Workloads[0].APIVersion = "a/b/c" }, "spec.workloads[0].apiVersion"},
		{"bad namespace", func(r *v1alpha1.WorkloadRebalancer) { r.Spec.Workloads[0].Namespace = "Not_A_Label" }, "spec.workloads[0].namespace"},
		{"negative ttl", func(r *v1alpha1.WorkloadRebalancer) { r.Spec.TTLSecondsAfterFinished = &ttl }, "spec.ttlSecondsAfterFinished"},
		{"namespaced", func(r *v1alpha1.WorkloadRebalancer) { r.Namespace = "default" }, "metadata.namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := valid()
			if errs := r.Validate(); len(errs) > 0 {
				t.Fatalf("Validate(valid) = %v; want none", errs)
			}
			tt.edit(r)
			errs := r.Validate()
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tt.field) {
				t.Errorf("Validate() = %v; want an error naming %s", errs, tt.field)
			}
		})
	}
}

func valid() *v1alpha1.WorkloadRebalancer {
	return &v1alpha1.WorkloadRebalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "r"},
		Spec: v1alpha1.WorkloadRebalancerSpec{Workloads: []v1alpha1.ObjectReference{
			{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"},
		}},
	}
}

func ref(name string) v1alpha1.ObjectReference {
	return v1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name}
}

// SyncObserved follows Karmada's rules for a spec that changed.
func TestSyncObserved(t *testing.T) {
	r := valid()
	r.Spec.Workloads = []v1alpha1.ObjectReference{ref("c"), ref("a"), ref("d")}
	r.Status.ObservedWorkloads = []v1alpha1.ObservedWorkload{
		{Workload: ref("a"), Result: v1alpha1.RebalanceSuccessful},                                       // kept: still wanted
		{Workload: ref("b"), Result: v1alpha1.RebalanceSuccessful},                                       // kept: gone from spec but done
		{Workload: ref("e"), Result: v1alpha1.RebalanceFailed, Reason: v1alpha1.RebalanceObjectNotFound}, // dropped: gone and not done
		{Workload: ref("d"), Result: v1alpha1.RebalanceFailed, Reason: v1alpha1.RebalanceObjectNotFound}, // kept: still wanted
	}
	want := []v1alpha1.ObservedWorkload{
		{Workload: ref("a"), Result: v1alpha1.RebalanceSuccessful},
		{Workload: ref("b"), Result: v1alpha1.RebalanceSuccessful},
		{Workload: ref("c")},
		{Workload: ref("d"), Result: v1alpha1.RebalanceFailed, Reason: v1alpha1.RebalanceObjectNotFound},
	}
	if diff := cmp.Diff(want, v1alpha1.SyncObserved(r)); diff != "" {
		t.Errorf("SyncObserved (-want +got):\n%s", diff)
	}
}

func TestExpiresAt(t *testing.T) {
	r := valid()
	if _, ok := r.ExpiresAt(); ok {
		t.Errorf("ExpiresAt() without TTL or finish = ok; want not")
	}
	ttl := int32(30)
	r.Spec.TTLSecondsAfterFinished = &ttl
	if _, ok := r.ExpiresAt(); ok {
		t.Errorf("ExpiresAt() unfinished = ok; want not")
	}
	done := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r.Status.FinishTime = &metav1.Time{Time: done}
	if at, ok := r.ExpiresAt(); !ok || !at.Time.Equal(done.Add(30*time.Second)) {
		t.Errorf("ExpiresAt() = %v, %v; want %v", at, ok, done.Add(30*time.Second))
	}
}
