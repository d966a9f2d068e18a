package status_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/state"
	"github.com/tetherproj/tether/agent/status"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// deadline bounds every wait for a report.
const deadline = 30 * time.Second

// quiet is how long a test listens to conclude that no report comes:
// several Resync periods (resync below).
const quiet = time.Second

// resync is the tests' Reporter.Resync, short so that quiet spans several.
const resync = 150 * time.Millisecond

type obj = map[string]any

// start runs an Applier and a Reporter on the shared cluster until the
// test ends.
func start(t *testing.T) (*apply.Applier, *status.Reporter) {
	t.Helper()
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	logger := hclog.NewNullLogger()
	a, err := apply.New(apply.Config{RESTConfig: env.Clusters[0].RESTConfig(), Interpreter: interp}, logger)
	if err != nil {
		t.Fatal(err)
	}
	r := status.New(status.Config{Source: a, Interpreter: interp, MinInterval: 50 * time.Millisecond, Resync: resync}, logger)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = a.Run(ctx) }()
	go func() { defer wg.Done(); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return a, r
}

func work(t *testing.T, key, version string, objs ...obj) state.Work {
	t.Helper()
	w := state.Work{Key: key, Version: version}
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Manifests = append(w.Manifests, b)
	}
	return w
}

func mustApply(t *testing.T, a *apply.Applier, w state.Work) {
	t.Helper()
	ack, err := a.Apply(context.Background(), w)
	if err != nil || ack.GetResult() != agentv1.ApplyResult_APPLY_RESULT_APPLIED {
		t.Fatalf("Apply(%s@%s) = %v, %v", w.Key, w.Version, ack, err)
	}
}

// deployment is a template as the hub renders it: with Karmada's
// resource-template generation annotation, which ReflectStatus requires.
func deployment(ns, name, image string) obj {
	return obj{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": obj{"name": name, "namespace": ns,
			"annotations": obj{"resourcetemplate.karmada.io/generation": "1"}},
		"spec": obj{
			"replicas": 2,
			"selector": obj{"matchLabels": obj{"app": name}},
			"template": obj{
				"metadata": obj{"labels": obj{"app": name}},
				"spec":     obj{"containers": []any{obj{"name": "main", "image": image}}},
			},
		},
	}
}

// next waits for a report of key that satisfies ok, skipping others.
func next(t *testing.T, r *status.Reporter, key string, ok func(*agentv1.StatusReport) bool) *agentv1.StatusReport {
	t.Helper()
	timeout := time.After(deadline)
	var last *agentv1.StatusReport
	for {
		select {
		case rep := <-r.Reports():
			if rep.GetWorkKey() != key {
				continue
			}
			last = rep
			if ok(rep) {
				return rep
			}
		case <-timeout:
			t.Fatalf("no wanted report of %s within %v; last: %v", key, deadline, last)
		}
	}
}

// reflected decodes a manifest's status_json.
func reflected(t *testing.T, m *agentv1.ManifestStatus) map[string]any {
	t.Helper()
	out := map[string]any{}
	if len(m.GetStatusJson()) > 0 {
		if err := json.Unmarshal(m.GetStatusJson(), &out); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func healthyWithReady(t *testing.T, n float64) func(*agentv1.StatusReport) bool {
	return func(rep *agentv1.StatusReport) bool {
		m := rep.GetManifests()[0]
		return m.GetApplied() && m.GetHealth() == agentv1.Health_HEALTH_HEALTHY && reflected(t, m)["readyReplicas"] == n
	}
}

// TestDeploymentStatus: readyReplicas and health flow into reports; a
// report goes out once per change, not on every resync; Resend repeats it.
func TestDeploymentStatus(t *testing.T) {
	a, r := start(t)
	w := work(t, "status/web", "v1", deployment("default", "status-web", "nginx:1"))
	mustApply(t, a, w)
	rep := next(t, r, w.Key, healthyWithReady(t, 2))
	if rep.GetVersion() != "v1" || rep.GetDigest() != status.Digest(rep) || rep.GetObserveTime() == nil {
		t.Fatalf("report %v; want version v1, its digest and an observe time", rep)
	}

	select {
	case again := <-r.Reports():
		t.Fatalf("report without a change: %v", again)
	case <-time.After(quiet):
	}

	r.Resend([]string{w.Key})
	again := next(t, r, w.Key, func(*agentv1.StatusReport) bool { return true })
	if again.GetDigest() != rep.GetDigest() {
		t.Fatalf("Resend digest %s; want the unchanged %s", again.GetDigest(), rep.GetDigest())
	}

	mustApply(t, a, work(t, w.Key, "v2", deployment("default", "status-web", "nginx:2")))
	next(t, r, w.Key, func(rep *agentv1.StatusReport) bool {
		return rep.GetVersion() == "v2" && healthyWithReady(t, 2)(rep)
	})
}

var cloneSets = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}

// TestCloneSetStatus: a CloneSet's status and health come from the built-in
// OpenKruise customization.
func TestCloneSetStatus(t *testing.T) {
	a, r := start(t)
	crd := readJSON(t, "../apply/testdata/cloneset-crd.json")
	cs := obj{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"metadata": obj{"name": "cs", "namespace": "default"}, "spec": obj{"replicas": 2}}
	w := work(t, "status/cs", "v1", crd, cs)
	mustApply(t, a, w)
	next(t, r, w.Key, func(rep *agentv1.StatusReport) bool {
		return rep.GetManifests()[1].GetHealth() == agentv1.Health_HEALTH_UNHEALTHY // no status yet
	})

	// No Kruise controller runs: write the status it would.
	setStatus(t, "default", "cs", obj{"replicas": 2, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 2})
	rep := next(t, r, w.Key, func(rep *agentv1.StatusReport) bool {
		return rep.GetManifests()[1].GetHealth() == agentv1.Health_HEALTH_HEALTHY
	})
	if got := reflected(t, rep.GetManifests()[1]); got["readyReplicas"] != float64(2) || got["generation"] != float64(1) {
		t.Fatalf("CloneSet status_json = %v; want the customization's fields", got)
	}
}

func setStatus(t *testing.T, ns, name string, st obj) {
	t.Helper()
	setStatusOf(t, cloneSets, ns, name, st)
}

// setStatusOf writes the status of a custom resource of gvr, as its
// controller would (none runs).
func setStatusOf(t *testing.T, gvr schema.GroupVersionResource, ns, name string, st obj) {
	t.Helper()
	ctx := context.Background()
	res := env.Clusters[0].Dynamic().Resource(gvr).Namespace(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st["observedGeneration"] = u.GetGeneration()
		u.Object["status"] = st
		_, err = res.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string) obj {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var o obj
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	return o
}
