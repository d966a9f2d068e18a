package rollout

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCondition: the template's condition is Unknown while the rollout
// progresses, False when it paused (the message names the failed and
// skipped clusters and the reason), True once complete.
func TestCondition(t *testing.T) {
	clusters := map[string]ClusterState{
		"m1": {Phase: Failed, Revision: "r2"},
		"m2": {Phase: Pending},
		"m3": {Phase: Skipped, Revision: "r2"},
	}
	for _, tc := range []struct {
		name string
		st   State
		want map[string]any
	}{
		{"progressing", State{Revision: "r2", Phase: Progressing, Clusters: map[string]ClusterState{"m1": {Phase: Succeeded}, "m2": {Phase: Updating}}},
			map[string]any{"type": "rollout.tether.io/Rollout", "status": "Unknown", "reason": "Progressing",
				"message": "RolloutPolicy default/web: revision r2 succeeded on 1/2 clusters"}},
		{"paused by failures", State{Revision: "r2", Phase: Paused, Message: "1 clusters failed (m1), more than maxFailures 0", Clusters: clusters},
			map[string]any{"type": "rollout.tether.io/Rollout", "status": "False", "reason": "Paused",
				"message": "RolloutPolicy default/web: revision r2 succeeded on 0/3 clusters; failed: m1; skipped: m3; 1 clusters failed (m1), more than maxFailures 0"}},
		{"held by an operator", State{Revision: "r2", Phase: Progressing, Held: true, Clusters: map[string]ClusterState{"m1": {Phase: Pending}}},
			map[string]any{"type": "rollout.tether.io/Rollout", "status": "False", "reason": "Paused",
				"message": "RolloutPolicy default/web: revision r2 succeeded on 0/1 clusters; paused by an operator"}},
		{"complete", State{Revision: "r2", Stable: "r2", Phase: Complete, Clusters: map[string]ClusterState{"m1": {Phase: Succeeded}}},
			map[string]any{"type": "rollout.tether.io/Rollout", "status": "True", "reason": "Complete",
				"message": "RolloutPolicy default/web: revision r2 succeeded on 1/1 clusters"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Condition(&Record{Policy: "default/web", State: tc.st})
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Condition (-want +got):\n%s", d)
			}
		})
	}
}
