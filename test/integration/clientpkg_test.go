package integration

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

// exampleTimeout bounds one run of examples/client: dial, apply, placement.
const exampleTimeout = time.Minute

// configMapOnA places the ConfigMap demo on cluster-a only.
const configMapOnA = `apiVersion: policy.tether.io/v1alpha1
kind: PropagationPolicy
metadata: {name: demo, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: demo}]
  placement:
    clusterAffinity: {clusterNames: [cluster-a]}
`

// TestExampleProgram builds examples/client, the README's Go example, and
// runs it against a tether-hub process with two connected clusters: it
// applies its ConfigMap, waits for the placement and prints where it runs
// and why the other cluster was rejected.
func TestExampleProgram(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	a := dialAdmin(t, dir, h.addr)
	ctx := ctxFor(t)
	for _, name := range []string{"cluster-a", "cluster-b"} {
		s := connectReady(ctx, t, mintAgent(t, dir, name), h.addr, nil)
		defer s.close()
		defer heartbeatEvery(s, time.Second)()
	}
	a.mustApply(ctx, configMapOnA)

	bin := filepath.Join(t.TempDir(), "example")
	build := exec.Command("go", "build", "-o", bin, "./examples/client")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build examples/client: %v\n%s", err, out)
	}
	runCtx, cancel := context.WithTimeout(ctx, exampleTimeout)
	defer cancel()
	out, err := exec.CommandContext(runCtx, bin, "--config", filepath.Join(dir, "admin.conf"), "--name", "demo").CombinedOutput()
	if err != nil {
		t.Fatalf("examples/client: %v\n%s", err, out)
	}
	for _, want := range []string{"ConfigMap default/demo created\n", "runs on cluster-a\n", "not on cluster-b: "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("examples/client printed:\n%s\nwant a line %q", out, want)
		}
	}
	if strings.Contains(string(out), "runs on cluster-b") {
		t.Errorf("examples/client printed:\n%s\nwant cluster-b rejected", out)
	}
}

// TestClientWatchResumesAcrossRestart: a client.Watch from a List's
// revision yields every ConfigMap applied before and after a restart of
// the hub (same data directory and port) exactly once and in order: the
// client resumes from the last revision it delivered.
func TestClientWatchResumesAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	listen := fmt.Sprintf("127.0.0.1:%d", freeTCPPorts(t, 1)[0])
	h := startHub(t, dir, "--listen", listen)
	ctx := ctxFor(t)
	c := dialClient(ctx, t, dir)
	_, rev, err := c.List(ctx, client.Selector{APIVersion: "v1", Kind: "ConfigMap"}, 2)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	watchCtx, stop := context.WithTimeout(ctx, 2*startTimeout)
	defer stop()
	got := make(chan string)
	ended := make(chan error, 1)
	go func() {
		for ev, err := range c.Watch(watchCtx, client.Selector{APIVersion: "v1", Kind: "ConfigMap"}, rev) {
			if err != nil {
				ended <- err
				return
			}
			got <- ev.GetType().String() + " " + ev.GetObject().GetRef().GetName()
		}
	}()
	applyConfigMaps(ctx, t, c, 1, 5)
	want := receiveNames(t, got, ended, 1, 5)
	h.kill()
	startHub(t, dir, "--listen", listen)
	applyConfigMaps(ctx, t, c, 6, 10)
	want = append(want, receiveNames(t, got, ended, 6, 10)...)
	if len(want) != 10 {
		t.Fatalf("watch yielded %v; want cm-1 to cm-10 once each", want)
	}
}

// dialClient dials the hub of dir with its admin.conf through the client
// package.
func dialClient(ctx context.Context, t *testing.T, dir string) *client.Client {
	t.Helper()
	cfg, err := client.LoadConfig(filepath.Join(dir, "admin.conf"))
	if err != nil {
		t.Fatal(err)
	}
	dialCtx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	c, err := client.Dial(dialCtx, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// applyConfigMaps applies cm-from to cm-to, one Apply each, retrying while
// the hub is not up yet.
func applyConfigMaps(ctx context.Context, t *testing.T, c *client.Client, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d, namespace: default}\n", i)
		poll(t, startTimeout, "apply cm-"+fmt.Sprint(i), func() (bool, string) {
			callCtx, cancel := context.WithTimeout(ctx, rpcTimeout)
			defer cancel()
			_, err := c.Apply(callCtx, []byte(manifest))
			return err == nil, fmt.Sprint(err)
		})
	}
}

// receiveNames takes the watch's next events and checks they are the
// ADDED events of cm-from to cm-to, in order.
func receiveNames(t *testing.T, got <-chan string, ended <-chan error, from, to int) []string {
	t.Helper()
	var names []string
	for i := from; i <= to; i++ {
		want := fmt.Sprintf("EVENT_TYPE_ADDED cm-%d", i)
		select {
		case ev := <-got:
			if ev != want {
				t.Fatalf("watch yielded %q after %v; want %q", ev, names, want)
			}
			names = append(names, ev)
		case err := <-ended:
			t.Fatalf("watch ended after %v: %v; want %q", names, err, want)
		case <-time.After(startTimeout):
			t.Fatalf("watch yielded nothing within %s after %v; want %q", startTimeout, names, want)
		}
	}
	return names
}

// TestClientErrorsSayWhatToDo: the client package's errors explain what is
// wrong: a hub that is not there, credentials of another hub, a server
// name the hub's certificate does not carry, an absent template.
func TestClientErrorsSayWhatToDo(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	h := startHub(t, dir)
	startHub(t, other)
	ctx := ctxFor(t)
	cases := map[string]struct {
		dir, addr, serverName, want string
	}{
		"another hub's credentials": {other, h.addr, "", "TLS with the hub at " + h.addr + " failed: the config's CA or certificate is not this hub's"},
		"nothing listening":         {dir, deadAddr(t), "", "unreachable: is tether-hub running?"},
		"wrong server name":         {dir, h.addr, "not-the-hub.example", "TLS with the hub at " + h.addr + " failed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := client.LoadConfig(filepath.Join(tc.dir, "admin.conf"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Address, cfg.ServerName = tc.addr, tc.serverName
			dialCtx, cancel := context.WithTimeout(ctx, rpcTimeout)
			defer cancel()
			c, err := client.Dial(dialCtx, cfg)
			if err == nil {
				c.Close()
				t.Fatalf("Dial(%s, server name %q) succeeded; want an error", tc.addr, tc.serverName)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial(%s, server name %q) = %v; want it to say %q", tc.addr, tc.serverName, err, tc.want)
			}
		})
	}
	c := dialClient(ctx, t, dir)
	_, err := c.GetPlacement(ctx, &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "absent"})
	var explained *client.Error
	if !errors.As(err, &explained) || explained.Code != codes.NotFound {
		t.Errorf("GetPlacement of an absent template = %v; want an explained NotFound", err)
	}
}

// TestClientDialsReplicaList: an Address listing a dead replica and a live
// one connects to the live one, its certificate checked for its host.
func TestClientDialsReplicaList(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, dir)
	ctx := ctxFor(t)
	cfg, err := client.LoadConfig(filepath.Join(dir, "admin.conf"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Address = deadAddr(t) + "," + h.addr
	dialCtx, cancel := context.WithTimeout(ctx, rpcTimeout)
	defer cancel()
	c, err := client.Dial(dialCtx, cfg)
	if err != nil {
		t.Fatalf("Dial(%s) = %v; want the live replica", cfg.Address, err)
	}
	defer c.Close()
	if _, _, err := c.List(dialCtx, client.Selector{APIVersion: "v1", Kind: "ConfigMap"}, 0); err != nil {
		t.Errorf("List over %s = %v; want it answered", cfg.Address, err)
	}
}

// TestClientWatchPlacementResumes: a client.WatchPlacement yields the
// current placement, then, across a restart of the hub (same data
// directory and port), the placement after a change made while it was
// away: once, at a later revision, never the one it had already.
func TestClientWatchPlacementResumes(t *testing.T) {
	dir := t.TempDir()
	listen := fmt.Sprintf("127.0.0.1:%d", freeTCPPorts(t, 1)[0])
	h := startHub(t, dir, "--listen", listen)
	ctx := ctxFor(t)
	c := dialClient(ctx, t, dir)
	applyConfigMaps(ctx, t, c, 1, 1)
	ref := &hubv1.ObjectRef{ApiVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "cm-1"}
	watchCtx, stop := context.WithTimeout(ctx, 2*startTimeout)
	defer stop()
	got := make(chan *hubv1.WatchPlacementResponse)
	ended := make(chan error, 1)
	go func() {
		for m, err := range c.WatchPlacement(watchCtx, ref, 0) {
			if err != nil {
				ended <- err
				return
			}
			got <- m
		}
	}()
	first := nextPlacement(t, got, ended)
	if first.GetType() != hubv1.EventType_EVENT_TYPE_ADDED {
		t.Fatalf("first placement message %v; want ADDED", first)
	}
	h.kill()
	startHub(t, dir, "--listen", listen)
	poll(t, startTimeout, "change cm-1", func() (bool, string) {
		callCtx, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		_, err := c.Apply(callCtx, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-1, namespace: default}\ndata: {v: '2'}\n"))
		return err == nil, fmt.Sprint(err)
	})
	obj, err := c.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	next := nextPlacement(t, got, ended)
	if next.GetType() != hubv1.EventType_EVENT_TYPE_MODIFIED || next.GetPlacement().GetRevision() < obj.GetRevision() {
		t.Fatalf("after the restart and a change at revision %d the watch yielded %v; want MODIFIED at or after it (first was at %d)",
			obj.GetRevision(), next, first.GetPlacement().GetRevision())
	}
}

// nextPlacement returns the watch's next message, failing if it ends or
// yields nothing within startTimeout.
func nextPlacement(t *testing.T, got <-chan *hubv1.WatchPlacementResponse, ended <-chan error) *hubv1.WatchPlacementResponse {
	t.Helper()
	select {
	case m := <-got:
		return m
	case err := <-ended:
		t.Fatalf("placement watch ended: %v", err)
	case <-time.After(startTimeout):
		t.Fatalf("placement watch yielded nothing within %s", startTimeout)
	}
	return nil
}
