package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

// watchTemplates is how many templates TestClientWatchesTenThousandTemplates
// applies: 1,000 in make test, $TETHER_WATCH_TEMPLATES (10000 for the
// issue's figure, about 45 s here) when set.
var watchTemplates = envInt("TETHER_WATCH_TEMPLATES", 1000)

// Sizes of TestClientWatchesTenThousandTemplates.
const (
	// watchBatch is how many ConfigMaps one Apply carries.
	watchBatch = 200
	// watchWait bounds the whole watch: applying 10,000 objects one etcd
	// write each, twice the hub's start, on a shared machine.
	watchWait = 10 * time.Minute
)

// TestClientWatchesTenThousandTemplates: a client.Watch from a List's
// revision yields the creation of each of 10,000 templates once, in
// revision order, although the hub is restarted half-way (the client
// resumes after the last event it yielded).
func TestClientWatchesTenThousandTemplates(t *testing.T) {
	dir := t.TempDir()
	listen := fmt.Sprintf("127.0.0.1:%d", freeTCPPorts(t, 1)[0])
	h := startHub(t, dir, "--listen", listen, "-log-level", "info")
	ctx, cancel := context.WithTimeout(ctxFor(t), watchWait)
	defer cancel()
	c := dialClient(ctx, t, dir)
	sel := client.Selector{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default"}
	_, rev, err := c.List(ctx, sel, 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- checkWatch(ctx, c, sel, rev, watchTemplates) }()

	start := time.Now()
	applyBatches(ctx, t, c, 0, watchTemplates/2)
	h.kill()
	startHub(t, dir, "--listen", listen, "-log-level", "info")
	applyBatches(ctx, t, c, watchTemplates/2, watchTemplates)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("watched %d creations across a hub restart in %s", watchTemplates, time.Since(start).Round(time.Millisecond))
}

// applyBatches applies ConfigMaps t-from to t-(to-1), watchBatch per
// Apply, retrying a batch while the hub is not up.
func applyBatches(ctx context.Context, t *testing.T, c *client.Client, from, to int) {
	t.Helper()
	for i := from; i < to; i += watchBatch {
		var b strings.Builder
		for j := i; j < min(i+watchBatch, to); j++ {
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t-%05d, namespace: default}\n---\n", j)
		}
		poll(t, startTimeout, fmt.Sprintf("apply t-%05d…", i), func() (bool, string) {
			callCtx, cancel := context.WithTimeout(ctx, rpcTimeout)
			defer cancel()
			_, err := c.Apply(callCtx, []byte(b.String()))
			return err == nil, fmt.Sprint(err)
		})
	}
}

// checkWatch watches from rev until n ConfigMaps were created, and fails
// on any event that is not the creation of one not yet seen: a repeated
// or unknown one, or a revision not above the previous event's. (An Apply
// writes its objects together, each at a revision of its own, not
// necessarily in input order.)
func checkWatch(ctx context.Context, c *client.Client, sel client.Selector, rev int64, n int) error {
	seen, last := map[string]bool{}, rev
	for ev, err := range c.Watch(ctx, sel, rev) {
		if err != nil {
			return fmt.Errorf("watch ended after %d creations: %w", len(seen), err)
		}
		name, r := ev.GetObject().GetRef().GetName(), ev.GetObject().GetRevision()
		var i int
		_, scanErr := fmt.Sscanf(name, "t-%05d", &i)
		if ev.GetType() != hubv1.EventType_EVENT_TYPE_ADDED || scanErr != nil || i >= n || seen[name] || r <= last {
			return fmt.Errorf("event %d: %s %s at revision %d (previous %d); want the ADDED of a t-%05d to t-%05d not seen yet, at a later revision",
				len(seen), ev.GetType(), name, r, last, 0, n-1)
		}
		seen[name], last = true, r
		if len(seen) == n {
			return nil
		}
	}
	return fmt.Errorf("watch stopped after %d creations", len(seen))
}

// envInt is the integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
