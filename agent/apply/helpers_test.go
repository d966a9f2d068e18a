package apply_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// deadline bounds every wait for the member cluster or the applier.
const deadline = 30 * time.Second

// pollInterval is how often a wait looks again.
const pollInterval = 50 * time.Millisecond

// startApplier returns a running Applier on the shared cluster; it stops
// (and is waited for) when the test ends.
func startApplier(t *testing.T) *apply.Applier {
	t.Helper()
	return startApplierWith(t, nil, testLogger(t))
}

// startApplierWith is startApplier with the applier's metrics registered
// in reg (when not nil) and its log in logger.
func startApplierWith(t *testing.T, reg prometheus.Registerer, logger hclog.Logger) *apply.Applier {
	t.Helper()
	return runApplier(t, apply.Config{RESTConfig: env.Clusters[0].RESTConfig(), Interpreter: testInterpreter(t), Registerer: reg}, logger)
}

// testInterpreter is an interpreter without customizations.
func testInterpreter(t *testing.T) *interpreter.Interpreter {
	t.Helper()
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return interp
}

// runApplier returns a running Applier of cfg; it stops (and is waited
// for) when the test ends.
func runApplier(t *testing.T, cfg apply.Config, logger hclog.Logger) *apply.Applier {
	t.Helper()
	a, err := apply.New(cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	run(t, a)
	return a
}

// run runs a until the test ends, and waits for it then.
func run(t *testing.T, a *apply.Applier) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = a.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

func testLogger(t *testing.T) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Warn, Output: testWriter{t}})
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// kube is the shared cluster's clientset.
func kube() kubernetes.Interface { return env.Clusters[0].Clientset() }

// namespace creates a namespace for one test.
func namespace(t *testing.T, name string) {
	t.Helper()
	_, err := kube().CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// obj is a manifest under construction.
type obj = map[string]any

func deployment(ns, name, image string, replicas int, labels map[string]string) obj {
	meta := obj{"name": name, "namespace": ns}
	if labels != nil {
		meta["labels"] = labels
	}
	return obj{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
		"spec": obj{
			"replicas": replicas,
			"selector": obj{"matchLabels": obj{"app": name}},
			"template": obj{
				"metadata": obj{"labels": obj{"app": name}},
				"spec":     obj{"containers": []any{obj{"name": "main", "image": image}}},
			},
		},
	}
}

func configMap(ns, name string, data map[string]string) obj {
	return obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": name, "namespace": ns}, "data": data}
}

// work builds a work of objs.
func work(t *testing.T, key, version string, opts *agentv1.ApplyOptions, objs ...obj) state.Work {
	t.Helper()
	w := state.Work{Key: key, Version: version, Options: opts,
		Binding: &agentv1.BindingReference{Namespace: "default", Name: "b-" + version, Uid: "0b5e1c1e-0000-4000-8000-000000000001"}}
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Manifests = append(w.Manifests, b)
	}
	return w
}

// mustApply applies w and wants result.
func mustApply(t *testing.T, a *apply.Applier, w state.Work, want agentv1.ApplyResult) *agentv1.Ack {
	t.Helper()
	ack, err := a.Apply(context.Background(), w)
	if err != nil {
		t.Fatalf("Apply(%s@%s) error: %v", w.Key, w.Version, err)
	}
	if ack.GetResult() != want {
		t.Fatalf("Apply(%s@%s) = %v (%s); want %v", w.Key, w.Version, ack.GetResult(), ack.GetMessage(), want)
	}
	return ack
}

// eventually polls cond until it returns nil or the deadline passes.
func eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var err error
	for {
		if err = cond(ctx); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within %v: %v", what, deadline, err)
		case <-time.After(pollInterval):
		}
	}
}
