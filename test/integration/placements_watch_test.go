package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
	"github.com/tetherproj/tether/internal/clientconfig"
	"github.com/tetherproj/tether/test/tier"
)

// placedSel selects the templates of the placement watch tests: the
// ConfigMaps applyLabelled writes.
var placedSel = client.Selector{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", LabelSelector: "watch=placements"}

// placementsWait bounds TestClientWatchesPlacementsOfTenThousandTemplates:
// 120 ms per template (applied, scheduled, moved, watched and replayed,
// some 6 messages each twice, on a shared machine), at least watchWait.
var placementsWait = max(watchWait, time.Duration(watchTemplates)*120*time.Millisecond)

// placementsPolicy propagates those ConfigMaps to the named clusters.
func placementsPolicy(clusters ...string) string {
	return fmt.Sprintf("apiVersion: policy.tether.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: watched, namespace: default}\nspec:\n"+
		"  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, labelSelector: {matchLabels: {watch: placements}}}]\n"+
		"  placement: {clusterAffinity: {clusterNames: [%s]}}\n", strings.Join(clusters, ", "))
}

// TestClientWatchesPlacementsOfTenThousandTemplates: a
// client.WatchPlacements over a selector, from a List's revision, follows
// the placements of watchTemplates templates (1,000 in make test,
// $TETHER_WATCH_TEMPLATES for the 10,000) while they are created
// on one cluster and then moved by their policy onto two: it sees every
// template end on both clusters, its revisions strictly increase although
// the hub is killed (-9) and restarted half-way and the client cancels
// and reopens its stream once, and the messages it received are exactly
// those an undisturbed watch from the same revision receives afterwards:
// nothing missed, nothing repeated. With 10,000 templates: 61,424
// changes watched in 7m26s from the first apply, replayed in 2m13s, on a
// 2-core machine shared with other work.
func TestClientWatchesPlacementsOfTenThousandTemplates(t *testing.T) {
	tier.Long(t, "places 10,000 templates")
	dir := t.TempDir()
	listen := fmt.Sprintf("127.0.0.1:%d", freeTCPPorts(t, 1)[0])
	flags := []string{"--listen", listen, "-log-level", "info", "--max-works-per-cluster", fmt.Sprint(2 * watchTemplates)}
	h := startHub(t, dir, flags...)
	ctx, cancel := context.WithTimeout(ctxFor(t), placementsWait)
	defer cancel()
	c := dialClient(ctx, t, dir)
	a := dialAdmin(t, dir, h.addr)
	for _, name := range []string{"cluster-a", "cluster-b"} {
		stop := mintAgent(t, dir, name).keepConnected(func() string { return listen }, time.Second)
		defer stop()
		waitClusterState(ctx, t, a, name, hubv1.ClusterState_CLUSTER_STATE_READY)
	}
	applyRetrying(ctx, t, c, placementsPolicy("cluster-a"))
	_, rev, err := c.List(ctx, placedSel, 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	type result struct {
		seen []string
		last int64
		err  error
	}
	done := make(chan result, 1)
	go func() {
		seen, last, err := followPlacements(ctx, c, rev, watchTemplates)
		done <- result{seen, last, err}
	}()

	start := time.Now()
	applyLabelled(ctx, t, c, 0, watchTemplates/2)
	h.kill9()
	startHub(t, dir, flags...)
	applyLabelled(ctx, t, c, watchTemplates/2, watchTemplates)
	applyRetrying(ctx, t, c, placementsPolicy("cluster-a", "cluster-b"))
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("watched the placements of %d templates (%d changes) across a hub kill -9 and a client reconnect in %s",
		watchTemplates, len(r.seen), time.Since(start).Round(time.Millisecond))
	replayed := time.Now()
	replay, err := replayPlacements(ctx, c, rev, r.last)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %d changes in %s", len(replay), time.Since(replayed).Round(time.Millisecond))
	if i := firstDifference(r.seen, replay); i >= 0 {
		t.Fatalf("the disturbed watch's message %d of %d is %q; an undisturbed watch from revision %d has %q (of %d)",
			i, len(r.seen), at(r.seen, i), rev, at(replay, i), len(replay))
	}
}

// followPlacements watches placedSel's placements from revision from
// until each of n templates is placed on cluster-a and cluster-b, failing
// on a revision not above the previous one. Half-way through the first n
// messages it cancels its stream and watches again from the last
// revision. It returns every message as placementLine renders it and the
// last revision.
func followPlacements(ctx context.Context, c *client.Client, from int64, n int) ([]string, int64, error) {
	var seen []string
	onBoth := map[string]bool{}
	last, reopened := from, false
	for {
		wctx, cancel := context.WithCancel(ctx)
		reopen := false
		for m, err := range c.WatchPlacements(wctx, placedSel, last) {
			if err != nil {
				cancel()
				return seen, last, fmt.Errorf("placement watch ended after %d messages: %w", len(seen), err)
			}
			if m.GetRevision() <= last {
				cancel()
				return seen, last, fmt.Errorf("message %d (%s) at revision %d after %d: want each change once, in order", len(seen), placementLine(m), m.GetRevision(), last)
			}
			seen, last = append(seen, placementLine(m)), m.GetRevision()
			onBoth[m.GetPlacement().GetTemplate().GetName()] = slices.Equal(sortedOn(m.GetPlacement()), []string{"cluster-a", "cluster-b"})
			if count(onBoth) == n {
				cancel()
				return seen, last, nil
			}
			if !reopened && len(seen) == n/2 {
				reopened, reopen = true, true
				break
			}
		}
		cancel()
		if !reopen {
			return seen, last, fmt.Errorf("placement watch stopped after %d messages", len(seen))
		}
	}
}

// replayPlacements watches placedSel's placements from revision from up
// to revision to, undisturbed.
func replayPlacements(ctx context.Context, c *client.Client, from, to int64) ([]string, error) {
	var out []string
	for m, err := range c.WatchPlacements(ctx, placedSel, from) {
		if err != nil {
			return out, fmt.Errorf("replay from revision %d ended after %d messages: %w", from, len(out), err)
		}
		out = append(out, placementLine(m))
		if m.GetRevision() >= to {
			return out, nil
		}
	}
	return out, fmt.Errorf("replay from revision %d stopped after %d messages", from, len(out))
}

// placementLine renders a message as "TYPE name@revision [clusters]".
func placementLine(m *hubv1.WatchPlacementsResponse) string {
	return fmt.Sprintf("%s %s@%d %v", strings.TrimPrefix(m.GetType().String(), "EVENT_TYPE_"),
		m.GetPlacement().GetTemplate().GetName(), m.GetRevision(), sortedOn(m.GetPlacement()))
}

// sortedOn is the sorted cluster list of a placement.
func sortedOn(p *hubv1.Placement) []string {
	out := placedOn(p)
	slices.Sort(out)
	return out
}

func count(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// firstDifference is the first index where a and b differ, -1 if equal.
func firstDifference(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if at(a, i) != at(b, i) {
			return i
		}
	}
	return -1
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<none>"
}

// applyLabelled applies ConfigMaps p-from to p-(to-1), labelled for
// placedSel, watchBatch per Apply, retrying a batch while the hub is not
// up.
func applyLabelled(ctx context.Context, t *testing.T, c *client.Client, from, to int) {
	t.Helper()
	for i := from; i < to; i += watchBatch {
		var b strings.Builder
		for j := i; j < min(i+watchBatch, to); j++ {
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p-%05d, namespace: default, labels: {watch: placements}}\n---\n", j)
		}
		applyRetrying(ctx, t, c, b.String())
	}
}

// applyRetrying applies manifests, retrying while the hub is not up.
func applyRetrying(ctx context.Context, t *testing.T, c *client.Client, manifests string) {
	t.Helper()
	poll(t, startTimeout, "apply", func() (bool, string) {
		callCtx, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		_, err := c.Apply(callCtx, []byte(manifests))
		return err == nil, fmt.Sprint(err)
	})
}

// stallTemplates is how many templates TestWatchPlacementsCutsStalledClient
// creates while its watcher reads nothing: with their bindings, several
// thousand changes, more than the watcher's 64 KiB gRPC window and the
// hub's buffer (512 changes) hold.
const stallTemplates = 1000

// stallTimeout is the hub's --watch-stall-timeout in
// TestWatchPlacementsCutsStalledClient, instead of the default minute: long
// enough that a client reading on a loaded machine is never cut.
const stallTimeout = 5 * time.Second

// TestWatchPlacementsCutsStalledClient: a WatchPlacements client that
// reads nothing while the placements of stallTemplates templates change is
// cut by the hub once its buffer has been full for the hub's stall time
// (stallTimeout), counted in the metrics; when it reads at last it gets
// what was on the way, then RESOURCE_EXHAUSTED saying it took nothing for
// that long and to watch again from its last revision; doing so, it gets
// the rest of the changes, none twice.
func TestWatchPlacementsCutsStalledClient(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir, "--metrics-listen", "127.0.0.1:0", "--watch-stall-timeout", stallTimeout.String())
	ctx := ctxFor(t)
	c := dialClient(ctx, t, dir)
	applyRetrying(ctx, t, c, placementsPolicy("nowhere"))
	_, rev, err := c.List(ctx, placedSel, 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	cfg, err := clientconfig.Load(filepath.Join(dir, "admin.conf"))
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := cfg.TLS()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(credentials.NewTLS(tlsCfg)),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := &hubv1.WatchPlacementsRequest{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", LabelSelector: placedSel.LabelSelector, StartRevision: rev}
	stalled, err := hubv1.NewPlacementServiceClient(conn).WatchPlacements(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	applyLabelled(ctx, t, c, 0, stallTemplates)
	poll(t, 3*time.Minute, "the stalled watcher cut (metrics)", func() (bool, string) {
		body, err := scrape(h)
		return err == nil && strings.Contains(body, `kind="watch_cut"} 1`), fmt.Sprint(err)
	})

	added := map[string]bool{}
	last := rev
	take := func(m *hubv1.WatchPlacementsResponse) {
		if m.GetRevision() <= last {
			t.Fatalf("%s after revision %d: want each change once, in order", placementLine(m), last)
		}
		last = m.GetRevision()
		if m.GetType() == hubv1.EventType_EVENT_TYPE_ADDED {
			added[m.GetPlacement().GetTemplate().GetName()] = true
		}
	}
	for {
		m, err := stalled.Recv()
		if err != nil {
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "took no event for "+stallTimeout.String()) ||
				!strings.Contains(err.Error(), "watch again from the revision of the last event received") {
				t.Fatalf("the stalled watch ended with %v; want RESOURCE_EXHAUSTED saying it took nothing for %s and to watch again from the last revision", err, stallTimeout)
			}
			t.Logf("cut after %d creations: %v", len(added), err)
			break
		}
		take(m)
	}
	if len(added) == stallTemplates {
		t.Fatalf("the stalled watcher received all %d creations before its end; want it cut short", stallTemplates)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for m, err := range c.WatchPlacements(wctx, placedSel, last) {
		if err != nil {
			t.Fatalf("watch again from revision %d after %d of %d creations: %v", last, len(added), stallTemplates, err)
		}
		take(m)
		if len(added) == stallTemplates {
			break
		}
	}
}
