package apply_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tetherproj/tether/agent/apply"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// TestSnapshotFromCacheWithoutManagedFields: the drift informers cache
// applied objects without their managedFields (memory: a server-side
// applied object's managedFields are often the larger part of its
// metadata), and a Snapshot, read from that cache, still has the rest.
func TestSnapshotFromCacheWithoutManagedFields(t *testing.T) {
	namespace(t, "cache")
	a := startApplier(t)
	w := work(t, "cache/cm", "v1", nil, configMap("cache", "cm", map[string]string{"k": "v"}))
	mustApply(t, a, w, agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	eventually(t, "a snapshot without managedFields", func(ctx context.Context) error {
		s, ok := a.Snapshot(ctx, w.Key)
		if !ok {
			return errors.New("work not held")
		}
		o := s.Objects[0].Observed
		switch {
		case o == nil:
			return errors.New("object not observed: " + s.Objects[0].Message)
		case len(o.GetManagedFields()) > 0:
			return errors.New("observed object has managedFields")
		case o.Object["data"] == nil || o.GetAnnotations()[apply.AnnotationWorkKey] != w.Key:
			return errors.New("observed object lost more than its managedFields")
		}
		return nil
	})
}
