package faults_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/test/faults"
	"github.com/tetherproj/tether/test/proc"
)

// convergeTimeout bounds the return to the state before a fault once it
// has ended: a lease period (the hub's default 40 s) for the hub to see an
// agent again, the agent's reconnect backoff (1 s doubling, so some 64 s
// after a minute away), and the resync, with a margin for a loaded
// machine.
const convergeTimeout = 3 * time.Minute

// settle is how long a scenario keeps watching once the members are back
// as before: a lease period (the hub's default 40 s) and a margin, since
// whatever the hub decides from a stale view of a cluster after a fault (a
// taint, an eviction) it decides within a lease period of seeing it again.
// Deletes during it count; the members must still be as before at its end.
const settle = 45 * time.Second

// statePoll is how often a scenario asks the hub for the clusters' states
// while a fault lasts: the resolution of "time to Unknown".
const statePoll = 250 * time.Millisecond

// callTimeout bounds one call to the hub while a fault lasts (a paused or
// killed hub does not answer).
const callTimeout = 2 * time.Second

// run is one scenario's measurement: the member objects before the fault,
// when the hub first saw each cluster not Ready, when the fault ended and
// how long the members took to be as before.
type run struct {
	x         *fixture
	name      string
	baseline  map[faults.Object]faults.State
	faultAt   time.Time
	unknownAt map[string]time.Time
	healAt    time.Time
	converged time.Duration // -1 until converge succeeds
}

// begin records the members' objects as the state to return to and
// starts the fault's clock.
func (x *fixture) begin(name string) *run {
	return &run{x: x, name: name, baseline: x.watch.Snapshot(), faultAt: time.Now(), unknownAt: map[string]time.Time{}, converged: -1}
}

// hold lets the fault last d, asking the hub for the clusters' states
// meanwhile (the hub may not answer: it may be the fault).
func (r *run) hold(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		r.observeStates()
		time.Sleep(min(statePoll, time.Until(end)))
	}
}

// observeStates records clusters the hub reports other than Ready.
func (r *run) observeStates() {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	resp, err := r.x.client.Clusters.ListClusters(ctx, &hubv1.ListClustersRequest{})
	if err != nil {
		return
	}
	now := time.Now()
	for _, c := range resp.GetClusters() {
		if _, seen := r.unknownAt[c.GetName()]; !seen && c.GetState() != hubv1.ClusterState_CLUSTER_STATE_READY {
			r.unknownAt[c.GetName()] = now
		}
	}
}

// healed marks the end of the fault.
func (r *run) healed() { r.healAt = time.Now() }

// converge waits until every cluster is Ready on the hub and the members
// hold the objects of the baseline again, with the same replicas, then
// watches them for settle more: they must still be so. A failure to get
// there, or to stay there, is a test error.
func (r *run) converge() {
	ctx, cancel := context.WithTimeout(context.Background(), convergeTimeout)
	defer cancel()
	err := proc.Poll(ctx, time.Second, func(context.Context) error {
		r.observeStates()
		cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		ready, err := r.x.client.ReadyClusters(cctx)
		if err != nil {
			return err
		}
		if len(ready) != len(r.x.names) {
			return fmt.Errorf("clusters Ready on the hub: %v", ready)
		}
		return sameObjects(r.baseline, r.x.watch.Snapshot())
	})
	if err != nil {
		r.x.t.Errorf("%s: members not back to their state before the fault within %s after it ended: %v", r.name, convergeTimeout, err)
		return
	}
	r.converged = time.Since(r.healAt)
	r.hold(settle)
	if err := sameObjects(r.baseline, r.x.watch.Snapshot()); err != nil {
		r.x.t.Errorf("%s: members back as before %s after the fault ended, but not %s later: %v", r.name, durFigure(r.converged), settle, err)
	}
}

// finish prints the scenario's figures and asserts the ones that must be
// zero: spurious deletes, connections the hub opened, connections towards
// an agent.
func (r *run) finish() {
	t := r.x.t
	deletes := r.x.watch.Deletes()
	dialOuts, err := r.x.net.HubDialOuts()
	if err != nil {
		t.Error(err)
	}
	inbound, err := r.x.net.InboundAttempts()
	if err != nil {
		t.Error(err)
	}
	t.Logf("FIGURES %s: spurious_deletes=%d time_to_unknown=%s converge_after_heal=%s hub_dial_outs=%d inbound_attempts=%d",
		r.name, len(deletes), r.unknownFigure(), durFigure(r.converged), dialOuts, inbound)
	for _, d := range deletes {
		t.Errorf("%s: spurious delete %s at fault+%s (%s)", r.name, d.Object, d.At.Sub(r.faultAt).Round(100*time.Millisecond), d.How)
	}
	if dialOuts != 0 {
		t.Errorf("%s: the hub's namespace opened %d connections; want 0 (the hub never dials out)", r.name, dialOuts)
	}
	if inbound != 0 {
		t.Errorf("%s: %d connections were attempted from the hub's side towards an agent; want 0", r.name, inbound)
	}
}

func (r *run) unknownFigure() string {
	if len(r.unknownAt) == 0 {
		return "never"
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(r.unknownAt)) {
		parts = append(parts, c+":"+r.unknownAt[c].Sub(r.faultAt).Round(100*time.Millisecond).String())
	}
	return strings.Join(parts, ",")
}

func durFigure(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.Round(100 * time.Millisecond).String()
}

// sameObjects says how now differs from the baseline: an object missing or
// extra, or other replicas. UIDs are not compared: a changed UID is a
// spurious delete, which the watcher counts.
func sameObjects(base, now map[faults.Object]faults.State) error {
	var diffs []string
	for o, s := range base {
		n, ok := now[o]
		switch {
		case !ok:
			diffs = append(diffs, "missing "+o.String())
		case n.Replicas != s.Replicas:
			diffs = append(diffs, fmt.Sprintf("%s: replicas %d, was %d", o, n.Replicas, s.Replicas))
		}
	}
	for o := range now {
		if _, ok := base[o]; !ok {
			diffs = append(diffs, "extra "+o.String())
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		return fmt.Errorf("members differ from before the fault: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// placedIn says whether the members hold nginx's objects in every cluster
// of placement p, with its replicas.
func placedIn(snap map[faults.Object]faults.State, p *hubv1.Placement) error {
	if len(p.GetClusters()) == 0 {
		return fmt.Errorf("nginx placed nowhere yet: %s", p.GetMessage())
	}
	for _, c := range p.GetClusters() {
		d := faults.Object{Cluster: c.GetCluster(), Resource: deployments, Namespace: "default", Name: "nginx"}
		cm := faults.Object{Cluster: c.GetCluster(), Resource: configMaps, Namespace: "default", Name: "nginx-index"}
		if s, ok := snap[d]; !ok || s.Replicas != int64(c.GetReplicas()) {
			return fmt.Errorf("%s: nginx %+v, placement says %d replicas", c.GetCluster(), s, c.GetReplicas())
		}
		if _, ok := snap[cm]; !ok {
			return fmt.Errorf("%s: no nginx-index", c.GetCluster())
		}
	}
	return nil
}
