package apply_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/tetherproj/tether/agent/apply"
	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
)

const (
	applied  = agentv1.ApplyResult_APPLY_RESULT_APPLIED
	failed   = agentv1.ApplyResult_APPLY_RESULT_FAILED
	conflict = agentv1.ApplyResult_APPLY_RESULT_CONFLICT
)

func image(ctx context.Context, ns, name string) (string, error) {
	d, err := kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return d.Spec.Template.Spec.Containers[0].Image, nil
}

func wantImage(ns, name, want string) func(context.Context) error {
	return func(ctx context.Context) error {
		got, err := image(ctx, ns, name)
		if err == nil && got != want {
			err = fmt.Errorf("image %q; want %q", got, want)
		}
		return err
	}
}

// TestServerSideApply: apply, Available, new version, member edit reverted,
// deletion repaired.
func TestServerSideApply(t *testing.T) {
	a := startApplier(t)
	ctx := context.Background()
	const ns = "ssa"
	nsObj := obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": ns}}
	w1 := work(t, "ssa/web", "v1", nil, deployment(ns, "web", "nginx:1", 2, nil), nsObj)
	ack := mustApply(t, a, w1, applied)
	if len(ack.Objects) != 2 || ack.Objects[0].GetIdentity().GetKind() != "Deployment" {
		t.Fatalf("Ack objects = %v; want one per manifest in manifest order", ack.Objects)
	}

	d, err := kube().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Labels[apply.LabelWorkKey] != apply.WorkLabelValue("ssa/web") || d.Annotations[apply.AnnotationWorkVersion] != "v1" ||
		d.Annotations[apply.AnnotationBinding] != "default/b-v1" || d.Labels[apply.LabelBindingUID] == "" {
		t.Fatalf("ownership labels %v annotations %v; want work key, version and binding", d.Labels, d.Annotations)
	}
	if err := env.Clusters[0].WaitForDeployment(ctx, ns, "web"); err != nil {
		t.Fatal(err)
	}

	mustApply(t, a, work(t, "ssa/web", "v2", nil, deployment(ns, "web", "nginx:2", 2, nil), nsObj), applied)
	eventually(t, "new version applied", wantImage(ns, "web", "nginx:2"))

	t.Run("edit reverted", func(t *testing.T) {
		editDeployment(t, ns, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "evil:1" })
		eventually(t, "edit reverted", wantImage(ns, "web", "nginx:2"))
	})
	t.Run("deletion repaired", func(t *testing.T) {
		old, err := kube().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := kube().AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "deleted object re-created", func(ctx context.Context) error {
			d, err := kube().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err == nil && d.UID == old.UID {
				err = fmt.Errorf("still the old object")
			}
			return err
		})
	})
}

// TestRetainReplicas: with Karmada's retain-replicas label the replicas the
// member set (an HPA) survive a re-apply; without it they are reverted.
func TestRetainReplicas(t *testing.T) {
	a := startApplier(t)
	ctx := context.Background()
	const ns = "retain"
	namespace(t, ns)
	retainLabel := map[string]string{"resourcetemplate.karmada.io/retain-replicas": "true"}
	mustApply(t, a, work(t, "retain/kept", "v1", nil, deployment(ns, "kept", "nginx:1", 2, retainLabel)), applied)
	mustApply(t, a, work(t, "retain/reverted", "v1", nil, deployment(ns, "reverted", "nginx:1", 2, nil)), applied)
	for _, name := range []string{"kept", "reverted"} {
		scale(t, ns, name, 5) // what an HPA does: the scale subresource
	}
	eventually(t, "replicas without the retain label reverted", wantReplicas(ns, "reverted", 2))

	mustApply(t, a, work(t, "retain/kept", "v2", nil, deployment(ns, "kept", "nginx:2", 2, retainLabel)), applied)
	if err := wantImage(ns, "kept", "nginx:2")(ctx); err != nil {
		t.Fatal(err)
	}
	if err := wantReplicas(ns, "kept", 5)(ctx); err != nil {
		t.Fatalf("replicas with the retain label after a new version: %v", err)
	}
}

func scale(t *testing.T, ns, name string, n int32) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := kube().AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = n
		_, err = kube().AppsV1().Deployments(ns).UpdateScale(ctx, name, s, metav1.UpdateOptions{FieldManager: "hpa"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func wantReplicas(ns, name string, want int32) func(context.Context) error {
	return func(ctx context.Context) error {
		d, err := kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && *d.Spec.Replicas != want {
			err = fmt.Errorf("replicas %d; want %d", *d.Spec.Replicas, want)
		}
		return err
	}
}

// TestUpdateStrategy: Karmada-style replace keeps what the member added and
// drops what the template dropped.
func TestUpdateStrategy(t *testing.T) {
	a := startApplier(t)
	ctx := context.Background()
	const ns = "update"
	namespace(t, ns)
	opts := &agentv1.ApplyOptions{Strategy: agentv1.ApplyStrategy_APPLY_STRATEGY_UPDATE}
	mustApply(t, a, work(t, "update/web", "v1", opts, deployment(ns, "web", "nginx:1", 1, map[string]string{"team": "a"})), applied)

	editDeployment(t, ns, "web", func(d *appsv1.Deployment) {
		d.Labels["member"] = "added"
		d.Finalizers = append(d.Finalizers, "example.com/keep")
	})
	mustApply(t, a, work(t, "update/web", "v2", opts, deployment(ns, "web", "nginx:2", 1, nil)), applied)

	d, err := kube().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "nginx:2" {
		t.Errorf("image %q; want nginx:2", got)
	}
	if d.Labels["member"] != "added" || len(d.Finalizers) != 1 {
		t.Errorf("labels %v finalizers %v; want the member's label and finalizer kept", d.Labels, d.Finalizers)
	}
	if _, ok := d.Labels["team"]; ok {
		t.Errorf("labels %v; want team dropped (the template dropped it)", d.Labels)
	}
	editDeployment(t, ns, "web", func(d *appsv1.Deployment) { d.Finalizers = nil })
}

// editDeployment changes a Deployment the way kubectl edit does (a full
// update by another field manager), retrying on conflicts with controllers.
func editDeployment(t *testing.T, ns, name string, edit func(*appsv1.Deployment)) {
	t.Helper()
	ctx := context.Background()
	// The member's controllers write the Deployment's status during a
	// rollout: retry a conflicting edit for up to about 10 s, not 5 tries.
	backoff := wait.Backoff{Steps: 40, Duration: 20 * time.Millisecond, Factor: 1.5, Cap: 500 * time.Millisecond}
	err := retry.RetryOnConflict(backoff, func() error {
		d, err := kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(d)
		_, err = kube().AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCreateOnly: an existing object is never written.
func TestCreateOnly(t *testing.T) {
	a := startApplier(t)
	const ns = "createonly"
	namespace(t, ns)
	opts := &agentv1.ApplyOptions{Strategy: agentv1.ApplyStrategy_APPLY_STRATEGY_CREATE_ONLY}
	mustApply(t, a, work(t, "co/web", "v1", opts, deployment(ns, "web", "nginx:1", 1, nil)), applied)
	mustApply(t, a, work(t, "co/web", "v2", opts, deployment(ns, "web", "nginx:2", 1, nil)), applied)
	if err := wantImage(ns, "web", "nginx:1")(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnly: nothing is written, not even ownership labels.
func TestReadOnly(t *testing.T) {
	a := startApplier(t)
	ctx := context.Background()
	const ns = "readonly"
	namespace(t, ns)
	createConfigMap(t, ns, "seen", map[string]string{"k": "member"})
	opts := &agentv1.ApplyOptions{Strategy: agentv1.ApplyStrategy_APPLY_STRATEGY_READ_ONLY}
	mustApply(t, a, work(t, "ro/seen", "v1", opts, configMap(ns, "seen", map[string]string{"k": "hub"})), applied)
	cm, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "seen", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "member" || cm.Labels[apply.LabelWorkKey] != "" {
		t.Fatalf("read-only object written: data %v labels %v", cm.Data, cm.Labels)
	}
	mustApply(t, a, work(t, "ro/absent", "v1", opts, configMap(ns, "absent", nil)), failed)
	if _, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "absent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("read-only work created its object: %v", err)
	}
}

func createConfigMap(t *testing.T, ns, name string, data map[string]string) {
	t.Helper()
	_, err := kube().CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestConflict: Abort leaves a foreign object alone and says so; Overwrite
// takes it over.
func TestConflict(t *testing.T) {
	a := startApplier(t)
	ctx := context.Background()
	const ns = "conflict"
	namespace(t, ns)
	createConfigMap(t, ns, "theirs", map[string]string{"k": "member"})

	ack := mustApply(t, a, work(t, "c/theirs", "v1", nil, configMap(ns, "theirs", map[string]string{"k": "hub"})), conflict)
	if !strings.Contains(ack.GetMessage(), "ConfigMap conflict/theirs") || ack.Objects[0].GetResult() != conflict {
		t.Errorf("Ack message %q objects %v; want the object named with CONFLICT", ack.GetMessage(), ack.Objects)
	}
	cm, err := kube().CoreV1().ConfigMaps(ns).Get(ctx, "theirs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "member" || cm.Labels[apply.LabelWorkKey] != "" {
		t.Fatalf("conflicting object touched: data %v labels %v", cm.Data, cm.Labels)
	}

	over := &agentv1.ApplyOptions{ConflictResolution: agentv1.ConflictResolution_CONFLICT_RESOLUTION_OVERWRITE}
	mustApply(t, a, work(t, "c/theirs", "v2", over, configMap(ns, "theirs", map[string]string{"k": "hub"})), applied)
	cm, err = kube().CoreV1().ConfigMaps(ns).Get(ctx, "theirs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "hub" || cm.Labels[apply.LabelWorkKey] == "" {
		t.Fatalf("overwrite: data %v labels %v; want taken over", cm.Data, cm.Labels)
	}
	// Another work's object is a conflict too.
	mustApply(t, a, work(t, "c/other", "v1", nil, configMap(ns, "theirs", map[string]string{"k": "other"})), conflict)
}
