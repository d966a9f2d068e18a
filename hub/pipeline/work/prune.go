package work

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Prune removes, in place, what must not be sent to a member cluster: the
// hub's bookkeeping (Karmada's prune.RemoveIrrelevantFields, with
// RemoveJobTTLSeconds) and values another cluster assigned.
//
//   - metadata: creationTimestamp, deletionTimestamp,
//     deletionGracePeriodSeconds, generation, managedFields,
//     resourceVersion, selfLink, uid, ownerReferences, finalizers; status.
//   - Deployment: the deployment.kubernetes.io/revision(-history)
//     annotations.
//   - Job: unless spec.manualSelector, the controller-uid selector labels
//     and the controller-uid and job-name template labels; always
//     spec.ttlSecondsAfterFinished.
//   - Secret of type service-account-token: the service-account.uid
//     annotation and data.
//   - ServiceAccount: the secrets named <name>-token-*. (Karmada's loop
//     skips the entry after each one it removes; Tether removes them all.)
//   - Service: spec.clusterIP and spec.clusterIPs, unless clusterIP is None.
//   - PersistentVolumeClaim: the volume.kubernetes.io/selected-node
//     annotation; and when the PVC was bound by a PV controller
//     (pv.kubernetes.io/bind-completed), spec.volumeName and the binding
//     annotations, which name a volume of another cluster. A volumeName the
//     user wrote (static binding) is kept.
func Prune(obj *unstructured.Unstructured) {
	for _, f := range []string{"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
		"generation", "managedFields", "resourceVersion", "selfLink", "uid", "ownerReferences", "finalizers"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	gk := obj.GroupVersionKind().GroupKind()
	switch {
	case gk.Group == "apps" && gk.Kind == "Deployment":
		removeAnnotations(obj, "deployment.kubernetes.io/revision", "deployment.kubernetes.io/revision-history")
	case gk.Group == "batch" && gk.Kind == "Job":
		pruneJob(obj)
	case gk.Group == "" && gk.Kind == "Secret":
		pruneSecret(obj)
	case gk.Group == "" && gk.Kind == "ServiceAccount":
		pruneServiceAccount(obj)
	case gk.Group == "" && gk.Kind == "Service":
		if ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); ip != "None" {
			unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
		}
	case gk.Group == "" && gk.Kind == "PersistentVolumeClaim":
		prunePVC(obj)
	}
}

func pruneJob(obj *unstructured.Unstructured) {
	unstructured.RemoveNestedField(obj.Object, "spec", "ttlSecondsAfterFinished")
	if manual, _, _ := unstructured.NestedBool(obj.Object, "spec", "manualSelector"); manual {
		return
	}
	for _, l := range []string{"controller-uid", "batch.kubernetes.io/controller-uid"} {
		unstructured.RemoveNestedField(obj.Object, "spec", "selector", "matchLabels", l)
	}
	for _, l := range []string{"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"} {
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "labels", l)
	}
}

func pruneSecret(obj *unstructured.Unstructured) {
	if t, _, _ := unstructured.NestedString(obj.Object, "type"); t != "kubernetes.io/service-account-token" {
		return
	}
	removeAnnotations(obj, "kubernetes.io/service-account.uid")
	obj.Object["data"] = nil
}

func pruneServiceAccount(obj *unstructured.Unstructured) {
	secrets, ok, _ := unstructured.NestedSlice(obj.Object, "secrets")
	if !ok {
		return
	}
	prefix := obj.GetName() + "-token-"
	kept := secrets[:0]
	for _, s := range secrets {
		if m, ok := s.(map[string]any); ok {
			if name, _ := m["name"].(string); strings.HasPrefix(name, prefix) {
				continue
			}
		}
		kept = append(kept, s)
	}
	obj.Object["secrets"] = kept
}

func prunePVC(obj *unstructured.Unstructured) {
	if obj.GetAnnotations()["volume.kubernetes.io/selected-node"] != "" {
		removeAnnotations(obj, "volume.kubernetes.io/selected-node")
	}
	if _, bound := obj.GetAnnotations()["pv.kubernetes.io/bind-completed"]; !bound {
		return
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "volumeName")
	removeAnnotations(obj, "pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller")
}

// removeAnnotations deletes keys from obj's annotations, and the
// annotations map when it ends up empty.
func removeAnnotations(obj *unstructured.Unstructured, keys ...string) {
	a := obj.GetAnnotations()
	if a == nil {
		return
	}
	for _, k := range keys {
		delete(a, k)
	}
	if len(a) == 0 {
		unstructured.RemoveNestedField(obj.Object, "metadata", "annotations")
		return
	}
	obj.SetAnnotations(a)
}
