package ctl_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherproj/tether/cmd/tetherctl/ctl"
	"github.com/tetherproj/tether/hub/store"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// background is a tetherctl run in a goroutine.
type background struct {
	out, err syncBuffer
	code     chan int
	cancel   context.CancelFunc
}

// runBackground starts tetherctl --config conf args with stdin in; the
// test's cleanup cancels it and waits for it.
func runBackground(t *testing.T, conf, in string, args ...string) *background {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	b := &background{code: make(chan int, 1), cancel: cancel}
	go func() {
		b.code <- ctl.Run(ctx, append([]string{"--config", conf}, args...), strings.NewReader(in), &b.out, &b.err)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case c := <-b.code:
			b.code <- c
		case <-time.After(10 * time.Second):
			t.Errorf("tetherctl %v did not stop after cancel", args)
		}
	})
	return b
}

// exit waits for the run to end and returns its exit code.
func (b *background) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case c := <-b.code:
		b.code <- c
		return c
	case <-time.After(within):
		t.Fatalf("still running after %s; stdout %q, stderr %q", within, b.out.String(), b.err.String())
		return -1
	}
}

// eventually polls cond until it holds, failing the test after 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readyWebBinding is webBinding once m1 reports 3 of 3 ready.
var readyWebBinding = strings.NewReplacer(`"readyReplicas": 2`, `"readyReplicas": 3`,
	`\"readyReplicas\":2`, `\"readyReplicas\":3`).Replace(webBinding)

var webKey = store.BindingKey(store.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"})

func TestApplyWaitRollsOut(t *testing.T) {
	h := startOnlineHub(t)
	h.putClusters(t)
	run := runBackground(t, h.admin, webManifests, "apply", "-f", "-", "--wait", "--timeout", "30s")
	// No detector runs here: until a binding exists, nothing matched.
	eventually(t, "the no-policy line", func() bool { return strings.Contains(run.out.String(), "deployment/web  no propagation policy") })

	h.put(t, webKey, webBinding) // m1 2 of 3 ready
	eventually(t, "the 2/3 line", func() bool { return strings.Contains(run.out.String(), "deployment/web  m1 2/3\n") })
	select {
	case c := <-run.code:
		t.Fatalf("apply --wait = %d with m1 at 2/3; want it still waiting", c)
	default:
	}

	h.put(t, webKey, readyWebBinding)
	if code := run.exit(t, 20*time.Second); code != 0 {
		t.Fatalf("apply --wait = %d, stderr %q; want 0 once m1 is 3/3", code, run.err.String())
	}
	out := run.out.String()
	for _, want := range []string{"deployment/web created\npropagationpolicy/web created\n", "deployment/web  m1 3/3 ready\n", "rolled out in "} {
		if !strings.Contains(out, want) {
			t.Errorf("apply --wait =\n%s\nwant %q", out, want)
		}
	}
}

func TestApplyWaitTimesOut(t *testing.T) {
	h := webHub(t) // m1 reports 2 of 3 ready
	code, out, errOut := runWith(t, h.admin, webManifests, "apply", "-f", "-", "--wait", "--timeout", "3s")
	if code != 1 {
		t.Fatalf("apply --wait --timeout 3s = %d, stdout %q, stderr %q; want 1", code, out, errOut)
	}
	if !strings.Contains(out, "deployment/web  m1 2/3\n") {
		t.Errorf("stdout %q; want the progress line", out)
	}
	for _, want := range []string{"timed out after 3s before the rollout finished (the objects are applied)",
		"deployment/web: m1 2/3", "tetherctl describe deployment web -n default", "--timeout"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q; want %q", errOut, want)
		}
	}
}

func TestApplyWaitRefusals(t *testing.T) {
	h := startOnlineHub(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "-f", "-", "--wait", "--dry-run"}, "--wait and --dry-run"},
		{[]string{"apply", "-f", "-", "--wait", "--timeout", "0s"}, "--timeout 0s: must be positive"},
	} {
		code, _, errOut := runWith(t, h.admin, webManifests, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("tetherctl %v = %d, %q; want 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
	// Only policies: nothing rolls out, --wait returns at once.
	pp := webManifests[strings.Index(webManifests, "apiVersion: policy"):]
	if code, out, errOut := runWith(t, h.admin, pp, "apply", "-f", "-", "--wait"); code != 0 || out != "propagationpolicy/web created\n" {
		t.Errorf("apply --wait of a policy = %d, %q, %q; want 0 and no progress", code, out, errOut)
	}
}
