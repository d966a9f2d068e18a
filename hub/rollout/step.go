package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/hub/aggregate"
	"github.com/tetherproj/tether/hub/pipeline/rollout"
	"github.com/tetherproj/tether/hub/pipeline/work"
	"github.com/tetherproj/tether/hub/render"
	"github.com/tetherproj/tether/hub/store"
)

// stepKey advances the rollout of one work key and stores it when it
// changed.
func (l *Loop) stepKey(ctx context.Context, key string) {
	t, be := l.in.templates[key], l.in.bindings[key]
	pol := l.in.policyOf(t)
	if pol == nil || len(l.in.brokenNS[t.GetNamespace()]) > 0 {
		return // not paced, or unknown: the renderer holds or renders as today
	}
	entry, stored := l.in.records[key]
	if stored && entry.rec == nil {
		return // the record does not decode: held until repaired
	}
	ro, ok := l.renders.Rollout(key)
	if !ok {
		return // not rendered yet: every cluster holds
	}
	s, err := rollout.Compile(&pol.Spec)
	if err != nil {
		l.log.Warn("RolloutPolicy does not compile; its rollouts are held", "policy", pol.Namespace+"/"+pol.Name, "error", err)
		return
	}
	now := l.cfg.Now()
	rec := rollout.Record{}
	if stored {
		rec = cloneRecord(entry.rec)
	}
	clusters := l.clustersOf(be, now)
	if len(clusters) == 0 || l.waitsForAgents(&rec, clusters, now) {
		return // not placed yet (a rollout of no cluster would complete at once), or agents awaited
	}
	watched := rec.Watched
	if !l.resumed[key] {
		l.resumed[key] = true
		if gap := now.Sub(rec.Watched) - 2*WatchInterval; !rec.Watched.IsZero() && gap > 0 {
			rec.Unwatched(gap)
			l.log.Info("rollout resumed after a gap nobody watched it; its clusters in flight keep the time they had left", "work", key, "gap", gap)
		}
	}
	healthy := map[string]rollout.Seen{}
	if rec.State.Revision == ro.Revision {
		for c, seen := range rec.Healthy {
			healthy[c] = seen
		}
	}
	reports := reportsOf(ro, l.obs.Observed(be.key, be.b), now, healthy)
	next, wake := rollout.Step(&s, ro.Revision, clusters, reports, rec.State, now)
	if !wake.IsZero() && (l.wakeAt.IsZero() || wake.Before(l.wakeAt)) {
		l.wakeAt = wake
	}
	out := rec
	out.Policy, out.State, out.Healthy = pol.Namespace+"/"+pol.Name, next, healthy
	if len(healthy) == 0 {
		out.Healthy = nil
	}
	if content, err := historyContent(t); err == nil {
		out.History = append([]rollout.Entry(nil), rec.History...)
		out.Remember(ro.Revision, content)
	}
	if next.Phase != rollout.Complete && now.Sub(watched) >= WatchInterval {
		out.Watched = now
	}
	prev := entry.rec
	if !stored {
		prev = &rollout.Record{}
	}
	l.write(ctx, key, entry.rev, stored, prev, &out)
}

// WatchInterval is how often a rollout in progress records that the hub
// watches it (Record.Watched): a store write per rollout in progress at
// most this often; a hub resuming it after a longer gap does not count the
// gap against its clusters in flight.
const WatchInterval = 5 * time.Second

// waitsForAgents reports whether the rollout must wait: within the
// start-up grace some cluster in flight has no lease yet (its agent has
// not reconnected to this hub, which holds nothing it reported).
func (l *Loop) waitsForAgents(rec *rollout.Record, clusters []rollout.Cluster, now time.Time) bool {
	if !now.Before(l.graceUntil) {
		return false
	}
	for _, c := range clusters {
		if cs, ok := rec.State.Clusters[c.Name]; ok && (cs.Phase == rollout.Updating || cs.Phase == rollout.Soaking) {
			if _, ok := l.leases.Get(c.Name); !ok {
				return true
			}
		}
	}
	return false
}

// cloneRecord copies what stepping changes of a stored record (the view's
// is shared).
func cloneRecord(r *rollout.Record) rollout.Record {
	out := *r
	out.State.Clusters = make(map[string]rollout.ClusterState, len(r.State.Clusters))
	for k, v := range r.State.Clusters {
		out.State.Clusters[k] = v
	}
	out.Healthy = make(map[string]rollout.Seen, len(r.Healthy))
	for k, v := range r.Healthy {
		out.Healthy[k] = v
	}
	return out
}

// clustersOf returns the binding's target clusters with their labels and
// reachability.
func (l *Loop) clustersOf(be bindingEntry, now time.Time) []rollout.Cluster {
	targets := work.Targets(be.b)
	out := make([]rollout.Cluster, 0, len(targets))
	for _, tc := range targets {
		out = append(out, rollout.Cluster{Name: tc.Name, Labels: l.labelsOf(tc.Name), Reachable: l.reachable(tc.Name, now)})
	}
	return out
}

// reportsOf turns what the agents hold into Reports of ro's revision: an
// observation of a version not rendered at it is no report. A cluster is
// Healthy since the hub first saw it Healthy at its version (healthy,
// updated: an agent's observe time may predate the version, as a status
// that did not change keeps its time); a cluster not Healthy leaves it.
func reportsOf(ro render.Rollout, obs map[string]aggregate.Observed, now time.Time, healthy map[string]rollout.Seen) map[string]rollout.Report {
	out := map[string]rollout.Report{}
	for cluster := range healthy {
		if _, ok := obs[cluster]; !ok {
			delete(healthy, cluster)
		}
	}
	for cluster, o := range obs {
		if !ro.Versions[o.Version] || o.Health != configv1alpha1.ResourceHealthy {
			delete(healthy, cluster)
		}
		if !ro.Versions[o.Version] {
			continue
		}
		// Applied as the binding's item reads it: the ack of the version,
		// else the report's manifest (a restarted single hub holds no ack:
		// an agent does not ack again a version it applied).
		r := rollout.Report{Applied: o.Applied}
		if o.Acked && !o.Applied {
			r.Failed = o.Message
			if r.Failed == "" {
				r.Failed = "apply failed"
			}
		}
		switch o.Health {
		case configv1alpha1.ResourceHealthy:
			seen, ok := healthy[cluster]
			if !ok || seen.Version != o.Version {
				seen = rollout.Seen{Version: o.Version, Since: now}
				healthy[cluster] = seen
			}
			r.Health, r.HealthySince = rollout.Healthy, seen.Since
		case configv1alpha1.ResourceUnhealthy:
			r.Health = rollout.Unhealthy
		}
		out[cluster] = r
	}
	return out
}

// historyContent is what undo re-applies of t: the object without its
// server-set metadata.
func historyContent(t *unstructured.Unstructured) (json.RawMessage, error) {
	c := t.DeepCopy()
	for _, f := range []string{"resourceVersion", "uid", "generation", "creationTimestamp", "managedFields"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(c.Object, "status")
	return c.MarshalJSON()
}

// write stores out when it differs from prev, conditional on rev (create
// when nothing was stored). A conflict is left to the next pass, which
// steps from what the view then holds.
func (l *Loop) write(ctx context.Context, key string, rev int64, stored bool, prev, out *rollout.Record) {
	nb, err := json.Marshal(out)
	if err != nil {
		l.log.Error("rollout record does not encode", "work", key, "error", err)
		return
	}
	if stored {
		if pb, err := json.Marshal(prev); err == nil && bytes.Equal(pb, nb) {
			return
		}
		_, err = l.st.Update(ctx, store.RolloutKey(key), nb, rev)
	} else {
		_, err = l.st.Create(ctx, store.RolloutKey(key), nb)
	}
	switch {
	case err == nil:
		if out.State.Phase != prev.State.Phase || out.State.Revision != prev.State.Revision {
			l.log.Info("rollout moved", "work", key, "revision", out.State.Revision, "phase", out.State.Phase, "message", out.State.Message)
		}
	case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrExists):
		l.log.Debug("rollout record changed meanwhile; stepped again on the next pass", "work", key)
	case ctx.Err() == nil:
		l.log.Warn("rollout record not written", "work", key, "error", err)
	}
}
