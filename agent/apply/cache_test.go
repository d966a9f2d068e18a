package apply_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tetherproj/tether/agent/apply"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// TestSnapshotFromCacheWithoutManagedFields: the drift informers cache
// applied objects without their managedFields (memory: a server-side
// applied object's managedFields are often the larger part of its
// metadata), and a Snapshot, read from that cache, still has the rest.
func TestSnapshotFromCacheWithoutManagedFields(t *testing.T) {
	namespace(t, "cache")
	a := startApplier(t)
	w := work(t, "cache/cm", "v1", nil, configMap("cache", "cm", map[string]string{"k": "v"}))
	mustApply(t, a, w, agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	eventually(t, "a snapshot without managedFields", func(ctx context.Context) error {
		s, ok := a.Snapshot(ctx, w.Key)
		if !ok {
			return errors.New("work not held")
		}
		o := s.Objects[0].Observed
		switch {
		case o == nil:
			return errors.New("object not observed: " + s.Objects[0].Message)
		case len(o.GetManagedFields()) > 0:
			return errors.New("observed object has managedFields")
		case o.Object["data"] == nil || o.GetAnnotations()[apply.AnnotationWorkKey] != w.Key:
			return errors.New("observed object lost more than its managedFields")
		}
		return nil
	})
}

// TestNewVersionAppliedWithoutRead: once the drift informer holds an
// object of the work, applying a new version of the work writes it
// without reading it from the API server first (the write carries the
// cached resourceVersion instead, so it still lands only on the object
// seen); the new content is there.
func TestNewVersionAppliedWithoutRead(t *testing.T) {
	namespace(t, "cacheread")
	rc := env.Clusters[0].RESTConfig()
	var gets atomic.Int64
	const path = "/api/v1/namespaces/cacheread/configmaps/cm"
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && r.URL.Path == path {
				gets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	interp, err := interpreter.New(interpreter.Config{}, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	a := runApplier(t, apply.Config{RESTConfig: rc, Interpreter: interp}, testLogger(t))
	w1 := work(t, "cacheread/cm", "v1", nil, configMap("cacheread", "cm", map[string]string{"k": "1"}))
	mustApply(t, a, w1, agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	eventually(t, "the object in the drift informer", func(ctx context.Context) error {
		s, ok := a.Snapshot(ctx, w1.Key)
		if !ok || s.Objects[0].Observed == nil || len(s.Objects[0].Observed.GetManagedFields()) > 0 {
			return errors.New("not read from the cache yet") // a GET's copy has managedFields
		}
		return nil
	})
	before := gets.Load()
	w2 := work(t, "cacheread/cm", "v2", nil, configMap("cacheread", "cm", map[string]string{"k": "2"}))
	mustApply(t, a, w2, agentv1.ApplyResult_APPLY_RESULT_APPLIED)
	if n := gets.Load() - before; n != 0 {
		t.Errorf("applying v2 read the object %d times from the API server; want 0 (it is in the cache)", n)
	}
	cm, err := kube().CoreV1().ConfigMaps("cacheread").Get(context.Background(), "cm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "2" || cm.Annotations[apply.AnnotationWorkVersion] != "v2" {
		t.Errorf("object after v2: data %v, work version %q; want k=2, v2", cm.Data, cm.Annotations[apply.AnnotationWorkVersion])
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
