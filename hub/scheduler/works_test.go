package scheduler

import (
	"sort"
	"strings"
	"testing"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

func TestWorksOf(t *testing.T) {
	b := binding(dividedStatic("m1", "m2"), 2, tc("m1", 1), tc("m2", 1))
	b.Spec.RequiredBy = []workv1alpha1.BindingSnapshot{{Name: "app", Clusters: []workv1alpha1.TargetCluster{tc("m2", 1), tc("m4", 1)}}}
	b.Spec.GracefulEvictionTasks = []workv1alpha1.GracefulEvictionTask{{FromCluster: "m3"}}
	var got []string
	for c := range worksOf(b) {
		got = append(got, c)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "m1,m2,m3,m4" {
		t.Errorf("worksOf = %v; want m1 m2 (targets), m3 (evicting), m4 (required by)", got)
	}
}
