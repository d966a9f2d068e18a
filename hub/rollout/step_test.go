package rollout

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
	"github.com/tetherproj/tether/hub/render"
)

// TestReportsOf: only observations of a version rendered at the
// revision are reports (an older version's Healthy never counts); a soak
// counts from the hub's first Healthy sighting of that version, kept
// across passes, and forgotten when the cluster is not Healthy or its
// version changes; applied without an ack held (a restarted hub) counts.
func TestReportsOf(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	now := t0.Add(time.Minute)
	ro := render.Rollout{Revision: "r2", Versions: map[string]bool{"v2": true, "v2b": true}}
	healthy := aggregate.Observed{Acked: true, Applied: true, Health: configv1alpha1.ResourceHealthy}
	obs := map[string]aggregate.Observed{
		"old":       {Version: "v1", Acked: true, Applied: true, Health: configv1alpha1.ResourceHealthy},
		"soaking":   withVersion(healthy, "v2"),
		"new":       withVersion(healthy, "v2"),
		"failed":    {Version: "v2", Acked: true, Applied: false, Message: "conflict", Health: configv1alpha1.ResourceUnknown},
		"unhealthy": {Version: "v2", Acked: true, Applied: true, Health: configv1alpha1.ResourceUnhealthy},
		"moved":     withVersion(healthy, "v2b"),
		"reported":  {Version: "v2", Applied: true, Health: configv1alpha1.ResourceHealthy},
	}
	seen := map[string]rollout.Seen{
		"old":       {Version: "v1", Since: t0},
		"soaking":   {Version: "v2", Since: t0},
		"unhealthy": {Version: "v2", Since: t0},
		"moved":     {Version: "v2", Since: t0},
		"gone":      {Version: "v2", Since: t0},
	}
	got := reportsOf(ro, obs, now, seen)
	want := map[string]rollout.Report{
		"soaking":   {Applied: true, Health: rollout.Healthy, HealthySince: t0},
		"new":       {Applied: true, Health: rollout.Healthy, HealthySince: now},
		"failed":    {Failed: "conflict"},
		"unhealthy": {Applied: true, Health: rollout.Unhealthy},
		"moved":     {Applied: true, Health: rollout.Healthy, HealthySince: now},
		"reported":  {Applied: true, Health: rollout.Healthy, HealthySince: now},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reportsOf (-want +got):\n%s", diff)
	}
	wantSeen := map[string]rollout.Seen{
		"soaking":  {Version: "v2", Since: t0},
		"new":      {Version: "v2", Since: now},
		"moved":    {Version: "v2b", Since: now},
		"reported": {Version: "v2", Since: now},
	}
	if diff := cmp.Diff(wantSeen, seen); diff != "" {
		t.Errorf("first Healthy sightings after reportsOf (-want +got):\n%s", diff)
	}
}

func withVersion(o aggregate.Observed, v string) aggregate.Observed {
	o.Version = v
	return o
}
