package place

import (
	"encoding/json"
	"maps"
	"time"

	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// AnnotationUnhealthySince records on a binding whose policy sets
// failover.application when the leader first saw each target cluster's
// application Unhealthy: the JSON of a map from cluster name to an
// RFC 3339 time (ApplicationEvictions' since). Stored with the binding, it
// survives a leader change: the new leader counts the toleration from the
// recorded start, not from when it took over. Absent when no cluster is
// being counted.
//
// The recorded time is the recording leader's clock, read by the next
// leader's: replicas' clocks must agree (NTP keeps them well under a
// second apart); a new leader whose clock is S ahead fails over S early,
// one S behind S late.
const AnnotationUnhealthySince = "scheduler.tether.io/unhealthy-since"

// RecordedUnhealthy reads b's AnnotationUnhealthySince; nil when absent or
// not decodable (the toleration then starts again: a later failover, never
// an earlier one).
func RecordedUnhealthy(b *workv1alpha1.ResourceBinding) map[string]time.Time {
	raw, ok := b.Annotations[AnnotationUnhealthySince]
	if !ok {
		return nil
	}
	var rec map[string]time.Time
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || len(rec) == 0 {
		return nil
	}
	return rec
}

// recordUnhealthy sets b's AnnotationUnhealthySince to since, or removes
// it when since is empty; a record already equal to since stays as it is.
// b's annotations are its own (a clone's).
func recordUnhealthy(b *workv1alpha1.ResourceBinding, since map[string]time.Time) {
	switch {
	case len(since) == 0:
		delete(b.Annotations, AnnotationUnhealthySince)
	case maps.EqualFunc(since, RecordedUnhealthy(b), time.Time.Equal):
	case b.Annotations == nil:
		b.Annotations = map[string]string{AnnotationUnhealthySince: JSONString(since)}
	default:
		b.Annotations[AnnotationUnhealthySince] = JSONString(since)
	}
}

// unhealthySince is ApplicationEvictions' since for b: what b records,
// else the loop's memory (a binding written before the record existed).
func unhealthySince(b *workv1alpha1.ResourceBinding, memory map[string]time.Time) map[string]time.Time {
	if rec := RecordedUnhealthy(b); rec != nil {
		return rec
	}
	return memory
}
