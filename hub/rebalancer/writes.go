package rebalancer

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/tetherproj/tether/api/apps/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/store"
)

// trigger sets the binding's spec.rescheduleTriggeredAt to the
// rebalancer's creationTimestamp (Karmada's trigger; TriggerAt), over the revision
// the view holds: a binding that moved since is a conflict, retried once
// the view has caught up. Only that field changes; every other byte of
// the binding (the aggregated status items hub/aggregate wrote included)
// is written back as stored.
func (l *Loop) trigger(ctx context.Context, key string, r *appsv1alpha1.WorkloadRebalancer) error {
	o, ok := l.v.Get(key)
	if !ok {
		return fmt.Errorf("binding %s: %w", key, store.ErrNotFound)
	}
	kv, err := l.st.Get(ctx, key)
	if err != nil {
		return err
	}
	if kv.Revision != o.Revision {
		return fmt.Errorf("binding %s moved since the view's revision %d: %w", key, o.Revision, store.ErrConflict)
	}
	var last *metav1.Time
	if b, ok := o.Value.(*workv1alpha1.ResourceBinding); ok && b != nil {
		last = b.Status.LastScheduledTime
	}
	at := TriggerAt(r.CreationTimestamp, last)
	value, err := patchJSON(kv.Value, "spec", "rescheduleTriggeredAt", &at)
	if err != nil {
		return fmt.Errorf("binding %s: %w", key, err)
	}
	_, err = l.st.Update(ctx, key, value, kv.Revision)
	return err
}

// writeStatus replaces the rebalancer's status over revision rev and
// returns the new revision.
func (l *Loop) writeStatus(ctx context.Context, key string, rev int64, s appsv1alpha1.WorkloadRebalancerStatus) (int64, error) {
	kv, err := l.st.Get(ctx, key)
	if err != nil {
		return rev, err
	}
	if kv.Revision != rev {
		return rev, fmt.Errorf("rebalancer %s moved since revision %d: %w", key, rev, store.ErrConflict)
	}
	value, err := patchJSON(kv.Value, "status", "", s)
	if err != nil {
		return rev, fmt.Errorf("rebalancer %s: %w", key, err)
	}
	return l.st.Update(ctx, key, value, rev)
}

// patchJSON sets the top-level field name of a stored JSON object, and
// within it the nested field sub when sub is not empty, keeping every
// other byte of the value as stored.
func patchJSON(stored []byte, name, sub string, value any) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(stored, &top); err != nil {
		return nil, err
	}
	enc, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	if sub != "" {
		inner := map[string]json.RawMessage{}
		if raw, ok := top[name]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &inner); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		inner[sub] = enc
		if enc, err = json.Marshal(inner); err != nil {
			return nil, err
		}
	}
	top[name] = enc
	return json.Marshal(top)
}
