package status_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/status"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// promptGroup is the group of the test's own copy of the CloneSet CRD
// (TestCloneSetStatus's work owns the real one in the shared cluster); no
// customization knows it, so its whole .status is reflected.
const promptGroup = "prompt.status.tether.test"

var promptGVR = schema.GroupVersionResource{Group: promptGroup, Version: "v1alpha1", Resource: "clonesets"}

// promptCRD is the CloneSet CRD moved to promptGroup.
func promptCRD(t *testing.T) obj {
	t.Helper()
	crd := readJSON(t, "../apply/testdata/cloneset-crd.json")
	crd["metadata"] = obj{"name": "clonesets." + promptGroup}
	crd["spec"].(obj)["group"] = promptGroup
	return crd
}

// longInterval is a hub's status_min_interval far longer than promptWait.
const longInterval = time.Minute

// promptWait bounds the wait for a report of a status change: a fraction
// of longInterval, so a reporter that holds a work's second report for its
// MinInterval fails.
const promptWait = 10 * time.Second

// TestChangeReportedWithoutWaitingMinInterval: an object turning ready in
// the member cluster is reported at once (after coalescing), although its
// work was reported just before and MinInterval is a minute: a rollout's
// few status changes are not held back for the hub's interval.
func TestChangeReportedWithoutWaitingMinInterval(t *testing.T) {
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	logger := hclog.NewNullLogger()
	a, err := apply.New(apply.Config{RESTConfig: env.Clusters[0].RESTConfig(), Interpreter: interp}, logger)
	if err != nil {
		t.Fatal(err)
	}
	r := status.New(status.Config{Source: a, Interpreter: interp, MinInterval: longInterval, Resync: time.Hour}, logger)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = a.Run(ctx) }()
	go func() { defer wg.Done(); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })

	w := work(t, "status/prompt", "v1", promptCRD(t), obj{"apiVersion": promptGroup + "/v1alpha1", "kind": "CloneSet",
		"metadata": obj{"name": "prompt", "namespace": "default"}, "spec": obj{"replicas": 1}})
	mustApply(t, a, w)
	next(t, r, w.Key, func(rep *agentv1.StatusReport) bool { return rep.GetManifests()[1].GetApplied() })

	setStatusOf(t, promptGVR, "default", "prompt", obj{"readyReplicas": 1})
	timeout := time.After(promptWait)
	for {
		select {
		case rep := <-r.Reports():
			if rep.GetWorkKey() == w.Key && reflected(t, rep.GetManifests()[1])["readyReplicas"] == float64(1) {
				return
			}
		case <-timeout:
			t.Fatalf("the ready CloneSet was not reported within %v (MinInterval %v)", promptWait, longInterval)
		}
	}
}
