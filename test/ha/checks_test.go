package ha_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/test/faults"
	"github.com/tetherproj/tether/test/proc"
)

// convergeTimeout bounds the wait for the members to hold every
// acknowledged apply once the load and the fault are over: the new
// leader's scheduling of what was applied meanwhile, the works' delivery
// and the agents' applies, with a margin for a loaded machine.
const convergeTimeout = 3 * time.Minute

// baseline is what must not change: the baseline Deployment's placement
// and the members' objects with their UIDs.
type baseline struct {
	placement map[string]int32
	objects   map[faults.Object]faults.State
	// generations are the baseline Deployment's metadata.generation by
	// member: a spec written again by an agent would change it.
	generations map[string]int64
}

// snapshot records the baseline.
func (x *fixture) snapshot(ctx context.Context) baseline {
	p, err := x.placement(ctx)
	if err != nil {
		x.t.Fatal(err)
	}
	g, err := x.webGenerations(ctx)
	if err != nil {
		x.t.Fatal(err)
	}
	return baseline{placement: p, objects: x.watch.Snapshot(), generations: g}
}

// webGenerations reads the baseline Deployment's generation in every
// member.
func (x *fixture) webGenerations(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, c := range x.kit.Clusters {
		d, err := c.Dynamic().Resource(deployments).Namespace("default").Get(ctx, webName, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		out[c.Name] = d.GetGeneration()
	}
	return out, nil
}

// outcome is what a scenario's checks found, for its FIGURES line.
type outcome struct {
	acked, retries, failed int
	lostOnHub              int
	uidChanges             int
	deletes                int
}

// check asserts what every scenario with a load must keep: every
// acknowledged apply in the hub and in every member, the baseline's
// placement, no member object deleted or re-created (UIDs of before), and
// no delete or eviction by an agent.
func (x *fixture) check(ctx context.Context, b baseline, l *load) outcome {
	t := x.t
	var o outcome
	o.acked, o.retries, o.failed = l.counts()
	names := l.ackedNames()
	lost, err := x.lostOnHub(ctx, names)
	if err != nil {
		t.Error(err)
	}
	o.lostOnHub = len(lost)
	if len(lost) > 0 {
		t.Errorf("%d acknowledged applies missing on the hub: %v", len(lost), lost)
	}
	cctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	err = proc.Poll(cctx, time.Second, func(ctx context.Context) error {
		missing, err := x.missingInMembers(ctx, names)
		if err != nil {
			return err
		}
		for c, m := range missing {
			return fmt.Errorf("%s lacks %d acknowledged ConfigMaps (first %s)", c, len(m), m[0])
		}
		return nil
	})
	if err != nil {
		t.Errorf("acknowledged applies not in every member within %s: %v", convergeTimeout, err)
	}
	if p, err := x.placement(ctx); err != nil {
		t.Error(err)
	} else if !maps.Equal(p, b.placement) {
		t.Errorf("%s's placement changed: %v, was %v", webName, p, b.placement)
	}
	if g, err := x.webGenerations(ctx); err != nil {
		t.Error(err)
	} else if !maps.Equal(g, b.generations) {
		t.Errorf("%s's spec changed in the members: generations %v, were %v", webName, g, b.generations)
	}
	if err := x.waitRolled(ctx); err != nil {
		t.Error(err)
	}
	o.uidChanges = x.checkUIDs(b)
	o.deletes = x.checkDeletes(ctx)
	return o
}

// checkUIDs reports every object of the baseline now missing from its
// member or holding another UID; it returns their number.
func (x *fixture) checkUIDs(b baseline) int {
	now := x.watch.Snapshot()
	var diffs []string
	for o, s := range b.objects {
		n, ok := now[o]
		switch {
		case !ok:
			diffs = append(diffs, "missing "+o.String())
		case n.UID != s.UID:
			diffs = append(diffs, fmt.Sprintf("%s: UID %s, was %s", o, n.UID, s.UID))
		}
	}
	sort.Strings(diffs)
	for _, d := range diffs {
		x.t.Errorf("member object changed: %s", d)
	}
	return len(diffs)
}

// checkDeletes reports every delete the watcher saw and every delete or
// eviction an agent counted; it returns their number.
func (x *fixture) checkDeletes(ctx context.Context) int {
	n := 0
	for _, d := range x.watch.Deletes() {
		x.t.Errorf("spurious delete %s at %s (%s)", d.Object, d.At.Format(time.RFC3339Nano), d.How)
		n++
	}
	for _, a := range x.agents {
		v, err := a.deletes(ctx)
		if err != nil {
			x.t.Error(err)
			continue
		}
		if v != 0 {
			x.t.Errorf("agent %s deleted or evicted %v objects in its member", a.cluster, v)
			n += int(v)
		}
	}
	return n
}

// agentsStreaming waits until every agent holds a stream, counted by the
// replicas (tether_hub_agent_streams summed over the live ones).
func (x *fixture) agentsStreaming(ctx context.Context) error {
	return proc.Poll(ctx, pollFine*4, func(ctx context.Context) error {
		if err := x.exited(); err != nil {
			return proc.Permanent(err)
		}
		total := 0
		for _, r := range x.hubs {
			if r.Exited() != nil {
				continue
			}
			v, err := r.Metric(ctx, "tether_hub_agent_streams")
			if err != nil {
				return err
			}
			var n int
			if _, err := fmt.Sscan(v, &n); err != nil {
				return fmt.Errorf("tether_hub_agent_streams %q: %w", v, err)
			}
			total += n
		}
		if total != len(x.agents) {
			return fmt.Errorf("%d agent streams on the replicas; want %d", total, len(x.agents))
		}
		return nil
	})
}

// reconnects measures, for every agent whose stream ended after since,
// how long it took to be welcomed again; never is -1.
func (x *fixture) reconnects(since time.Time) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, a := range x.agents {
		lost, back, err := a.reconnect(since)
		if err != nil {
			return nil, err
		}
		if lost {
			out[a.cluster] = back
		}
	}
	return out, nil
}

// percentile is the q-quantile (nearest rank) of ds, -1 for none.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return -1
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// fig renders a duration figure: "never" for -1.
func fig(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.Round(10 * time.Millisecond).String()
}

// scrape returns the lines of a Prometheus text endpoint.
func scrape(ctx context.Context, url string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if l := sc.Text(); !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

func isNotFound(err error) bool { return status.Code(err) == codes.NotFound }
