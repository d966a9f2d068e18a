package placement

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
)

// cl is a schedulable cluster with an external estimate of n replicas.
func cl(name string, n int32) Cluster {
	return Cluster{Name: name, AvailableReplicas: &n, APIEnabled: true}
}

func deployment(replicas int32) Workload {
	return Workload{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", Replicas: replicas}
}

func divided(pref policyv1alpha1.ReplicaDivisionPreference, dynamic bool) *policyv1alpha1.ReplicaSchedulingStrategy {
	rs := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: pref,
	}
	if dynamic {
		rs.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}
	}
	return rs
}

var (
	dynamicWeights = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, true)
	aggregatedPref = divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated, false)
)

func targets(kv ...any) []TargetCluster {
	out := []TargetCluster{}
	for i := 0; i < len(kv); i += 2 {
		out = append(out, TargetCluster{Name: kv[i].(string), Replicas: int32(kv[i+1].(int))})
	}
	return sortedTargets(out)
}

// scheduleTest is one table row: an input and either targets or an
// error type with a substring of its message.
type scheduleTest struct {
	name     string
	in       Input
	want     []TargetCluster
	wantErr  string // errorType name
	errText  string // substring of the message
	observed string // expected ObservedAffinityName, when checked
}

func runScheduleTests(t *testing.T, tests []scheduleTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Schedule(tt.in)
			if tt.wantErr != "" {
				if got := ErrorType(err); got != tt.wantErr {
					t.Fatalf("Schedule(%s) error = %v (%s); want %s", tt.name, err, got, tt.wantErr)
				}
				if !containsText(err, tt.errText) {
					t.Errorf("Schedule(%s) error = %q; want it to contain %q", tt.name, err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatalf("Schedule(%s) error = %v; want %v", tt.name, err, tt.want)
			}
			if diff := cmp.Diff(tt.want, sortedTargets(res.Clusters)); diff != "" {
				t.Errorf("Schedule(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
			if tt.observed != "" && res.ObservedAffinityName != tt.observed {
				t.Errorf("Schedule(%s) observed = %q; want %q", tt.name, res.ObservedAffinityName, tt.observed)
			}
		})
	}
}

func containsText(err error, s string) bool {
	return err != nil && strings.Contains(err.Error(), s)
}
