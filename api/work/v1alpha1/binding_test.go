package v1alpha1_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tetherproj/tether/api/codec"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/api/work/v1alpha1"
)

// binding is a Karmada ResourceBinding as karmadactl shows it.
const binding = `apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: nginx-deployment
  namespace: default
  generation: 3
spec:
  resource:
    apiVersion: apps/v1
    kind: Deployment
    name: nginx
    namespace: default
    uid: 2f0c
    resourceVersion: "1234"
  replicas: 3
  replicaRequirements:
    resourceRequest: {cpu: 100m}
    nodeClaim:
      nodeSelector: {disk: ssd}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
  clusters:
    - {name: member1, replicas: 2}
    - {name: member2, replicas: 1}
  gracefulEvictionTasks:
    - fromCluster: member3
      purgeMode: Gracefully
      replicas: 1
      reason: TaintUntolerated
      producer: TaintManager
      creationTimestamp: "2026-01-02T03:04:05Z"
  conflictResolution: Abort
  schedulerName: default-scheduler
  suspension: {dispatching: false, scheduling: true}
  schedulePriority: {priority: 10}
status:
  schedulerObservedGeneration: 3
  schedulerObservingAffinityName: primary
  lastScheduledTime: "2026-01-02T03:04:05Z"
  conditions:
    - {type: Scheduled, status: "True", reason: Success, message: ok, lastTransitionTime: "2026-01-02T03:04:05Z"}
  aggregatedStatus:
    - clusterName: member1
      applied: true
      health: Healthy
      status: {readyReplicas: 2}
`

func TestDecodeBindingRoundTrip(t *testing.T) {
	obj, err := codec.Decode([]byte(binding))
	if err != nil {
		t.Fatalf("Decode(binding) = %v; want no error", err)
	}
	rb := obj.(*v1alpha1.ResourceBinding)
	if errs := rb.Validate(); len(errs) > 0 {
		t.Errorf("Validate(binding) = %v; want no errors", errs)
	}
	if rb.Status.AggregatedStatus[0].Health != configv1alpha1.ResourceHealthy || string(rb.Status.AggregatedStatus[0].Status.Raw) != `{"readyReplicas":2}` {
		t.Errorf("Decode(binding) aggregatedStatus = %+v; want member1 Healthy with its status", rb.Status.AggregatedStatus[0])
	}
	if !*rb.Spec.Suspension.Scheduling || *rb.Spec.Suspension.Dispatching {
		t.Errorf("Decode(binding) suspension = %+v; want scheduling suspended, dispatching not", rb.Spec.Suspension)
	}
	js, err := codec.Encode(rb)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := yaml.YAMLToJSON([]byte(binding))
	var gotV, wantV any
	_ = json.Unmarshal(js, &gotV)
	_ = json.Unmarshal(want, &wantV)
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("Encode(Decode(binding)) differs (-input +encoded):\n%s", diff)
	}
}

func TestValidateBinding(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*v1alpha1.ResourceBinding)
		want   []string
	}{
		{"valid", func(*v1alpha1.ResourceBinding) {}, nil},
		{"no resource name", func(b *v1alpha1.ResourceBinding) { b.Spec.Resource.Name = "" }, []string{"spec.resource.name"}},
		{"negative replicas", func(b *v1alpha1.ResourceBinding) { b.Spec.Replicas = -1 }, []string{"spec.replicas"}},
		{"duplicate cluster", func(b *v1alpha1.ResourceBinding) { b.Spec.Clusters[1].Name = "member1" }, []string{"spec.clusters[1].name"}},
		{"negative cluster replicas", func(b *v1alpha1.ResourceBinding) { b.Spec.Clusters[0].Replicas = -2 }, []string{"spec.clusters[0].replicas"}},
		{"invalid placement", func(b *v1alpha1.ResourceBinding) { b.Spec.Placement.ReplicaScheduling.ReplicaSchedulingType = "Spread" },
			[]string{"spec.placement.replicaScheduling.replicaSchedulingType"}},
		{"eviction task without producer", func(b *v1alpha1.ResourceBinding) { b.Spec.GracefulEvictionTasks[0].Producer = "" },
			[]string{"spec.gracefulEvictionTasks[0].producer"}},
		{"status item without cluster", func(b *v1alpha1.ResourceBinding) { b.Status.AggregatedStatus[0].ClusterName = "" },
			[]string{"status.aggregatedStatus[0].clusterName"}},
		{"no namespace", func(b *v1alpha1.ResourceBinding) { b.Namespace = "" }, []string{"metadata.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := codec.Decode([]byte(binding))
			if err != nil {
				t.Fatal(err)
			}
			b := obj.(*v1alpha1.ResourceBinding)
			tt.mutate(b)
			b.SetDefaults()
			errs := b.Validate()
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("Validate(%s) = %v; want errors at %v", tt.name, errs, tt.want)
			}
		})
	}
}

func TestValidateClusterResourceBinding(t *testing.T) {
	b := &v1alpha1.ClusterResourceBinding{}
	b.Name = "ns-team-a"
	b.Spec.Resource = v1alpha1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: "team-a"}
	if errs := b.Validate(); len(errs) > 0 {
		t.Errorf("Validate(cluster binding) = %v; want no errors", errs)
	}
	b.Namespace = "default"
	if errs := b.Validate(); len(errs) != 1 || errs[0].Field != "metadata.namespace" {
		t.Errorf("Validate(cluster binding with a namespace) = %v; want an error at metadata.namespace", errs)
	}
}

// TestInternNames: two bindings decoded from the same JSON name their
// clusters with the same bytes once interned.
func TestInternNames(t *testing.T) {
	data := []byte(`{"spec":{"clusters":[{"name":"edge-1"}],"gracefulEvictionTasks":[{"fromCluster":"edge-2"}],
		"requiredBy":[{"name":"x","clusters":[{"name":"edge-3"}]}]},"status":{"aggregatedStatus":[{"clusterName":"edge-4"}]}}`)
	var a, b v1alpha1.ResourceBinding
	for _, x := range []*v1alpha1.ResourceBinding{&a, &b} {
		if err := json.Unmarshal(data, x); err != nil {
			t.Fatal(err)
		}
		x.InternNames()
	}
	names := func(x *v1alpha1.ResourceBinding) []*string {
		return []*string{&x.Spec.Clusters[0].Name, &x.Spec.GracefulEvictionTasks[0].FromCluster,
			&x.Spec.RequiredBy[0].Clusters[0].Name, &x.Status.AggregatedStatus[0].ClusterName}
	}
	for i, na := range names(&a) {
		nb := names(&b)[i]
		if *na != *nb || unsafe.StringData(*na) != unsafe.StringData(*nb) {
			t.Errorf("name %d: %q and %q are held twice; want one copy", i, *na, *nb)
		}
	}
}
