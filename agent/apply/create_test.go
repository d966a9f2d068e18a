package apply_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tetherproj/tether/agent/apply"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

// writeStrategies are the strategies that create an object: the
// default server-side apply, Karmada's update and create-only.
var writeStrategies = []agentv1.ApplyStrategy{
	agentv1.ApplyStrategy_APPLY_STRATEGY_SERVER_SIDE_APPLY,
	agentv1.ApplyStrategy_APPLY_STRATEGY_UPDATE,
	agentv1.ApplyStrategy_APPLY_STRATEGY_CREATE_ONLY,
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// eachStrategy runs test once per strategy, each in a namespace of its
// own (prefix and a letter).
func eachStrategy(t *testing.T, prefix string, strategies []agentv1.ApplyStrategy, test func(t *testing.T, ns string, opts *agentv1.ApplyOptions)) {
	for i, s := range strategies {
		t.Run(s.String(), func(t *testing.T) {
			ns := prefix + string(rune('a'+i))
			namespace(t, ns)
			test(t, ns, &agentv1.ApplyOptions{Strategy: s})
		})
	}
}

// TestNewObjectCreatedWithoutRead: once the drift informer of a kind has
// synced, a work's new object of that kind is created without reading it
// from the API server first (the informer holds none of that name).
func TestNewObjectCreatedWithoutRead(t *testing.T) {
	eachStrategy(t, "createnoread", writeStrategies, func(t *testing.T, ns string, opts *agentv1.ApplyOptions) {
		a, gets := countGets(t, "/api/v1/namespaces/"+ns+"/configmaps/new")
		applyAndCache(t, a, work(t, ns+"/first", "v1", opts, configMap(ns, "first", map[string]string{"k": "1"})))
		mustApply(t, a, work(t, ns+"/new", "v1", opts, configMap(ns, "new", map[string]string{"k": "new"})), agentv1.ApplyResult_APPLY_RESULT_APPLIED)
		if n := gets.Load(); n != 0 {
			t.Errorf("creating the new object read it %d times from the API server; want 0 (the synced informer holds none)", n)
		}
		cm, err := kube().CoreV1().ConfigMaps(ns).Get(context.Background(), "new", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["k"] != "new" || cm.Annotations[apply.AnnotationWorkKey] != ns+"/new" {
			t.Errorf("new object: data %v, work key %q; want k=new, %s/new", cm.Data, cm.Annotations[apply.AnnotationWorkKey], ns)
		}
	})
}

// TestCreateNeverTakesOverAForeignObject: an object the informer does not
// hold (no Tether label) may still exist. The create a new object gets
// then fails on it (an apply without a precondition would merge the
// work's fields into it: their fields differ), and the work is decided
// from a fresh read as before: a conflict (resolution Abort), the foreign
// object untouched.
func TestCreateNeverTakesOverAForeignObject(t *testing.T) {
	eachStrategy(t, "createforeign", writeStrategies, func(t *testing.T, ns string, opts *agentv1.ApplyOptions) {
		a := startApplier(t)
		applyAndCache(t, a, work(t, ns+"/first", "v1", opts, configMap(ns, "first", map[string]string{"k": "1"})))
		ctx := context.Background()
		foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: ns}, Data: map[string]string{"theirs": "x"}}
		if _, err := kube().CoreV1().ConfigMaps(ns).Create(ctx, foreign, metav1.CreateOptions{FieldManager: "someone"}); err != nil {
			t.Fatal(err)
		}
		mustApply(t, a, work(t, ns+"/theirs", "v1", opts, configMap(ns, "theirs", map[string]string{"k": "ours"})), agentv1.ApplyResult_APPLY_RESULT_CONFLICT)
		cm, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "theirs", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		managers := []string{}
		for _, f := range cm.ManagedFields {
			managers = append(managers, f.Manager)
		}
		if len(cm.Data) != 1 || cm.Data["theirs"] != "x" || len(cm.Labels) != 0 || len(cm.Annotations) != 0 || len(managers) != 1 {
			t.Errorf("foreign object after the work: data %v, labels %v, annotations %v, managers %v; want it untouched",
				cm.Data, cm.Labels, cm.Annotations, managers)
		}
	})
}

// TestCreateOfAnObjectNotSeenYet: an object of the work that the informer
// has not seen yet (dropped from its cache here) makes the create fail;
// the new version is then applied from a fresh read.
func TestCreateOfAnObjectNotSeenYet(t *testing.T) {
	eachStrategy(t, "createunseen", writeStrategies[:2], func(t *testing.T, ns string, opts *agentv1.ApplyOptions) {
		a, gets := countGets(t, "/api/v1/namespaces/"+ns+"/configmaps/cm")
		applyAndCache(t, a, work(t, ns+"/cm", "v1", opts, configMap(ns, "cm", map[string]string{"k": "1"})))
		ctx := context.Background()
		live, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := apply.DropCached(a, configMaps, &unstructured.Unstructured{Object: obj{"metadata": obj{"name": "cm", "namespace": ns}}}); err != nil {
			t.Fatal(err)
		}
		before := gets.Load()
		mustApply(t, a, work(t, ns+"/cm", "v2", opts, configMap(ns, "cm", map[string]string{"k": "2"})), agentv1.ApplyResult_APPLY_RESULT_APPLIED)
		if n := gets.Load() - before; n != 1 {
			t.Errorf("applying v2 of an object the informer had not seen read it %d times; want 1 (after the failed create)", n)
		}
		cm, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["k"] != "2" || cm.UID != live.UID {
			t.Errorf("object after v2: data %v, uid %s; want k=2 on the same object (%s)", cm.Data, cm.UID, live.UID)
		}
	})
}
