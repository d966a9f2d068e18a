package apply_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// quiet is how long TestForeignMetadataIsNotDrift listens for a repair
// that must not come: a repair follows a drift within milliseconds (the
// first backoff is 5 ms).
const quiet = 2 * time.Second

// repairLog counts the applier's "drift repaired" lines.
type repairLog struct {
	mu sync.Mutex // guards n
	n  int
}

func (l *repairLog) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "drift repaired") {
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
	}
	return len(p), nil
}

func (l *repairLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// patchMeta merge-patches a Deployment's metadata (its spec, and so its
// generation, untouched).
func patchMeta(t *testing.T, ns, name, patch string) {
	t.Helper()
	if _, err := kube().AppsV1().Deployments(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch deployment %s/%s: %v", ns, name, err)
	}
}

// TestForeignMetadataIsNotDrift: labels and annotations another writer
// adds to an applied object (the Deployment controller's revision
// annotation, a user's own) are not drift and cost no re-apply; a label
// Tether applied, changed, still is and is repaired.
func TestForeignMetadataIsNotDrift(t *testing.T) {
	const ns = "foreignmeta"
	namespace(t, ns)
	repairs := &repairLog{}
	a := startApplierWith(t, nil, hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: io.MultiWriter(repairs, testWriter{t})}))
	mustApply(t, a, work(t, "foreignmeta/web", "v1", nil, deployment(ns, "web", "nginx:1", 1, map[string]string{"team": "a"})), applied)
	eventually(t, "the controller's revision annotation", func(ctx context.Context) error {
		d, err := kube().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err == nil && d.Annotations["deployment.kubernetes.io/revision"] == "" {
			err = errors.New("no revision annotation yet")
		}
		return err
	})
	patchMeta(t, ns, "web", `{"metadata":{"annotations":{"example.com/note":"mine"},"labels":{"example.com/tier":"web"}}}`)
	time.Sleep(quiet) // listening for a repair that must not come
	if n := repairs.count(); n != 0 {
		t.Fatalf("%d drift repairs after other writers' labels and annotations; want none", n)
	}

	patchMeta(t, ns, "web", `{"metadata":{"labels":{"team":"b"}}}`)
	eventually(t, "Tether's label repaired", func(ctx context.Context) error {
		d, err := kube().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		switch {
		case err != nil:
			return err
		case d.Labels["team"] != "a":
			return errors.New("label team = " + d.Labels["team"])
		case d.Annotations["example.com/note"] != "mine":
			return errors.New("the repair removed another writer's annotation")
		}
		return nil
	})
}
