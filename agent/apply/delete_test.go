package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/agent/apply"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

const (
	deletePolicy = agentv1.DeletionPolicy_DELETION_POLICY_DELETE
	failover     = agentv1.DeleteReason_DELETE_REASON_FAILOVER
	unplaced     = agentv1.DeleteReason_DELETE_REASON_PLACEMENT_CHANGED
	templateGone = agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED
)

// syncBuffer is a log sink safe for the applier's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) lines(substr string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return out
}

// observedApplier is an applier whose metrics and Info log the test reads.
func observedApplier(t *testing.T) (*apply.Applier, *prometheus.Registry, *syncBuffer) {
	t.Helper()
	reg := prometheus.NewRegistry()
	logs := &syncBuffer{}
	logger := hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Info, Output: logs})
	return startApplierWith(t, reg, logger), reg, logs
}

func count(t *testing.T, reg *prometheus.Registry, metric string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if got[labels[i]] != labels[i+1] {
					continue next
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestDeleteIsLoggedAndCounted: every object deleted is one Info line
// naming the hub, the work, its version, the object and the reason, and
// counts in tether_agent_member_deletes_total by reason.
func TestDeleteIsLoggedAndCounted(t *testing.T) {
	a, reg, logs := observedApplier(t)
	const ns = "counted"
	namespace(t, ns)
	w := work(t, "c/web", "v1", nil, deployment(ns, "web", "nginx:1", 1, nil), configMap(ns, "web", nil))
	mustApply(t, a, w, applied)
	if err := a.Delete(context.Background(), w, removal(deletePolicy, failover)); err != nil {
		t.Fatal(err)
	}
	if got := count(t, reg, "tether_agent_member_deletes_total", "reason", "failover"); got != 2 {
		t.Errorf("tether_agent_member_deletes_total{reason=failover} = %v; want 2", got)
	}
	lines := logs.lines("object deleted in the member cluster")
	if len(lines) != 2 {
		t.Fatalf("delete log lines = %q; want 2", lines)
	}
	for _, l := range lines {
		for _, want := range []string{"hub_identity=hub-test", "work=c/web", "version=v1", "reason=failover", "object=", ns + "/web"} {
			if !strings.Contains(l, want) {
				t.Errorf("delete log line %q lacks %q", l, want)
			}
		}
	}
	if got := count(t, reg, "tether_agent_member_evictions_total"); got != 0 {
		t.Errorf("tether_agent_member_evictions_total = %v; want 0 (a hub's instruction is no eviction)", got)
	}
}

var widgets = schema.GroupVersionResource{Group: "example.tether.io", Version: "v1", Resource: "widgets"}

func widgetCRD() obj {
	return obj{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": obj{"name": "widgets.example.tether.io"},
		"spec": obj{
			"group": "example.tether.io", "scope": "Namespaced",
			"names": obj{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{obj{"name": "v1", "served": true, "storage": true,
				"schema": obj{"openAPIV3Schema": obj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}
}

// TestUnplacingNamespaceOrCRDOrphansThem: a Namespace or CRD whose work
// is removed for any reason but its template's deletion is kept (released,
// not deleted), so nothing inside it goes; its other objects are deleted.
func TestUnplacingNamespaceOrCRDOrphansThem(t *testing.T) {
	a, reg, _ := observedApplier(t)
	ctx := context.Background()
	const ns = "unplaced"
	w := work(t, "u/ns", "v1", nil, obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": ns}},
		configMap(ns, "inside", nil), widgetCRD())
	mustApply(t, a, w, applied)
	if err := a.Delete(ctx, w, removal(deletePolicy, unplaced)); err != nil {
		t.Fatal(err)
	}
	got, err := kube().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp != nil || got.Labels[apply.LabelWorkKey] != "" {
		t.Errorf("namespace after un-placing = %v, %v; want it kept, without Tether's label", got.GetObjectMeta(), err)
	}
	crd, err := env.Clusters[0].Dynamic().Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
		Get(ctx, "widgets.example.tether.io", metav1.GetOptions{})
	if err != nil || crd.GetDeletionTimestamp() != nil || crd.GetLabels()[apply.LabelWorkKey] != "" {
		t.Errorf("CRD after un-placing = %v; want it kept, without Tether's label", err)
	}
	if _, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "inside", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap of the work: %v; want it deleted", err)
	}
	if got := count(t, reg, "tether_agent_member_orphans_total", "reason", "placement_changed", "rule", "namespace_or_crd_not_template_deleted"); got != 2 {
		t.Errorf("orphans{placement_changed, namespace_or_crd} = %v; want 2", got)
	}
	if got := count(t, reg, "tether_agent_member_deletes_total"); got != 1 {
		t.Errorf("deletes = %v; want 1 (the ConfigMap)", got)
	}
}

// TestTemplateDeletedKeepsANamespaceWithForeignObjects: a Namespace whose
// template was deleted is deleted only when it holds nothing the work
// does not own.
func TestTemplateDeletedKeepsANamespaceWithForeignObjects(t *testing.T) {
	a, reg, logs := observedApplier(t)
	ctx := context.Background()
	nsWork := func(name string) obj {
		return obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": name}}
	}

	busy := work(t, "t/busy", "v1", nil, nsWork("busy"), configMap("busy", "ours", nil))
	mustApply(t, a, busy, applied)
	createConfigMap(t, "busy", "theirs", map[string]string{"k": "member"})
	if err := a.Delete(ctx, busy, removal(deletePolicy, templateGone)); err != nil {
		t.Fatal(err)
	}
	got, err := kube().CoreV1().Namespaces().Get(ctx, "busy", metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp != nil {
		t.Errorf("namespace with a foreign ConfigMap: %v, deleting %v; want it kept", err, got.GetDeletionTimestamp())
	}
	if lines := logs.lines("configmaps busy/theirs"); len(lines) != 1 {
		t.Errorf("log lines naming the foreign object = %q; want one", lines)
	}
	if got := count(t, reg, "tether_agent_member_orphans_total", "reason", "template_deleted", "rule", "namespace_holds_foreign_objects"); got != 1 {
		t.Errorf("orphans{template_deleted, foreign} = %v; want 1", got)
	}

	empty := work(t, "t/empty", "v1", nil, nsWork("empty"), configMap("empty", "ours", nil))
	mustApply(t, a, empty, applied)
	if err := a.Delete(ctx, empty, removal(deletePolicy, templateGone)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "namespace deleted", func(ctx context.Context) error {
		got, err := kube().CoreV1().Namespaces().Get(ctx, "empty", metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && got.DeletionTimestamp != nil) {
			return nil
		}
		return fmt.Errorf("namespace: %v, %v", got.GetObjectMeta(), err)
	})
	if got := count(t, reg, "tether_agent_member_deletes_total", "reason", "template_deleted"); got != 3 {
		t.Errorf("deletes{template_deleted} = %v; want 3 (each work's ConfigMap, the empty namespace)", got)
	}
}
