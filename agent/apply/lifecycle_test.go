package apply_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/agent/apply"
	"github.com/tetherproj/tether/agent/state"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

var cloneSets = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}

func cloneSetCRD(t *testing.T) obj {
	t.Helper()
	b, err := os.ReadFile("testdata/cloneset-crd.json")
	if err != nil {
		t.Fatal(err)
	}
	var o obj
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestNamespaceCRDAndCROrder: a CR listed before its CRD and namespace is
// applied after both, once the CRD is Established.
func TestNamespaceCRDAndCROrder(t *testing.T) {
	a := startApplier(t)
	const ns = "kruise"
	cr := obj{
		"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"metadata": obj{"name": "web", "namespace": ns},
		"spec":     obj{"replicas": 2},
	}
	nsObj := obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": ns}}
	ack := mustApply(t, a, work(t, "kruise/web", "v1", nil, cr, nsObj, cloneSetCRD(t)), applied)
	if got := ack.Objects[0].GetIdentity().GetKind(); got != "CloneSet" {
		t.Fatalf("Ack.Objects[0] kind %q; want CloneSet (manifest order)", got)
	}
	got, err := env.Clusters[0].Dynamic().Resource(cloneSets).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetLabels()[apply.LabelWorkKey] == "" {
		t.Fatalf("CloneSet labels %v; want ownership", got.GetLabels())
	}
}

// TestApplyFailure: the API server's refusal is in the Ack and in an Event.
func TestApplyFailure(t *testing.T) {
	a := startApplier(t)
	ctx := context.Background()
	const ns = "failure"
	namespace(t, ns)
	bad := deployment(ns, "bad", "nginx:1", 1, nil)
	bad["spec"].(obj)["selector"] = obj{"matchLabels": obj{"app": "other"}}
	ack := mustApply(t, a, work(t, "f/bad", "v1", nil, bad), failed)
	if !strings.Contains(ack.GetMessage(), "does not match template") {
		t.Fatalf("Ack message %q; want the API server's message", ack.GetMessage())
	}
	eventually(t, "ApplyFailed event", func(ctx context.Context) error {
		evs, err := kube().CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == apply.ReasonApplyFailed && e.Source.Component == apply.FieldManager &&
				e.InvolvedObject.Name == "bad" && strings.Contains(e.Message, "does not match") {
				return nil
			}
		}
		return fmt.Errorf("no ApplyFailed event among %d", len(evs.Items))
	})
	_ = ctx
}

// TestDelete: DELETE removes our objects; ORPHAN leaves them unlabelled;
// neither touches a foreign object.
func TestDelete(t *testing.T) {
	a := startApplier(t)
	ctx := context.Background()
	const ns = "delete"
	namespace(t, ns)
	createConfigMap(t, ns, "foreign", map[string]string{"k": "member"})
	gone := work(t, "d/gone", "v1", nil, deployment(ns, "gone", "nginx:1", 1, nil), configMap(ns, "gone", nil))
	kept := work(t, "d/kept", "v1", nil, configMap(ns, "kept", map[string]string{"k": "v"}))
	mustApply(t, a, gone, applied)
	mustApply(t, a, kept, applied)

	gone.Manifests = append(gone.Manifests, mustJSON(t, configMap(ns, "foreign", nil)))
	if err := a.Delete(ctx, gone, removal(agentv1.DeletionPolicy_DELETION_POLICY_DELETE, agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deployment deleted", func(ctx context.Context) error {
		_, err := kube().AppsV1().Deployments(ns).Get(ctx, "gone", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	if _, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "foreign", metav1.GetOptions{}); err != nil {
		t.Fatalf("foreign object: %v; want untouched", err)
	}

	if err := a.Delete(ctx, kept, removal(agentv1.DeletionPolicy_DELETION_POLICY_ORPHAN, agentv1.DeleteReason_DELETE_REASON_TEMPLATE_DELETED)); err != nil {
		t.Fatal(err)
	}
	cm, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels[apply.LabelWorkKey] != "" || cm.Annotations[apply.AnnotationWorkVersion] != "" || cm.Data["k"] != "v" {
		t.Fatalf("orphaned object labels %v annotations %v data %v; want ours stripped, the rest kept", cm.Labels, cm.Annotations, cm.Data)
	}
	if keys := a.Keys(); len(keys) != 0 {
		t.Fatalf("Keys() after Delete = %v; want none", keys)
	}
}

// TestPrune: an object dropped from a new version is deleted.
func TestPrune(t *testing.T) {
	a := startApplier(t)
	const ns = "prune"
	namespace(t, ns)
	mustApply(t, a, work(t, "p/w", "v1", nil, configMap(ns, "a", nil), configMap(ns, "b", nil)), applied)
	mustApply(t, a, work(t, "p/w", "v2", nil, configMap(ns, "a", nil)), applied)
	eventually(t, "dropped object deleted", func(ctx context.Context) error {
		_, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "b", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
}

func removal(p agentv1.DeletionPolicy, r agentv1.DeleteReason) state.Removal {
	return state.Removal{Policy: p, Reason: r, Hub: "hub-test"}
}

func mustJSON(t *testing.T, o obj) []byte {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFreshCRDsMapAtOnce: a custom resource listed before its new CRD is
// applied once the CRD is Established, although the API server serves the
// new kind in discovery only a moment later; each round is a new group.
func TestFreshCRDsMapAtOnce(t *testing.T) {
	a := startApplier(t)
	const ns = "fresh-crds"
	namespace(t, ns)
	for i := range 10 {
		group := fmt.Sprintf("fresh%d.example.com", i)
		crd := obj{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": obj{"name": "widgets." + group},
			"spec": obj{
				"group": group, "scope": "Namespaced",
				"names": obj{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
				"versions": []any{obj{"name": "v1", "served": true, "storage": true,
					"schema": obj{"openAPIV3Schema": obj{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
			},
		}
		cr := obj{"apiVersion": group + "/v1", "kind": "Widget", "metadata": obj{"name": "w", "namespace": ns}, "spec": obj{"size": i}}
		mustApply(t, a, work(t, "fresh/"+group, "v1", nil, cr, crd), applied)
	}
}
