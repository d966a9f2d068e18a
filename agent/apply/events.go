package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ReasonApplyFailed is the reason of the Event recorded in the member
// cluster when an object cannot be applied.
const ReasonApplyFailed = "ApplyFailed"

// recordFailure records a Warning Event about desired: on the object when
// it exists, else in its namespace ("default" for a cluster-scoped one)
// naming the object that could not be created. A repeated failure with the
// same message bumps the Event's count instead of adding one, and is
// written at most every eventEvery (eventLimiter). Events are best effort:
// a failure to record one is only logged.
func (a *Applier) recordFailure(ctx context.Context, desired, observed *unstructured.Unstructured, message string) {
	ref := corev1.ObjectReference{
		APIVersion: desired.GetAPIVersion(), Kind: desired.GetKind(),
		Namespace: desired.GetNamespace(), Name: desired.GetName(),
	}
	if observed != nil {
		ref.UID, ref.ResourceVersion = observed.GetUID(), observed.GetResourceVersion()
	}
	ns := desired.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	now := metav1.NewTime(time.Now())
	name := eventName(ref, message)
	write, count := a.events.allow(name, now.Time)
	if !write {
		return
	}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns},
		InvolvedObject: ref,
		Reason:         ReasonApplyFailed,
		Message:        message,
		Type:           corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: FieldManager},
		FirstTimestamp: now, LastTimestamp: now, Count: count,
		ReportingController: "tether.io/agent", ReportingInstance: FieldManager,
	}
	events := a.kube.Events(ns)
	_, err := events.Create(ctx, ev, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = a.bumpEvent(ctx, ns, ev.Name, count, now)
	}
	if err != nil {
		a.logger.Warn("event not recorded", "namespace", ns, "object", desired.GetName(), "error", err)
	}
}

// bumpEvent adds count to the count of an existing Event.
func (a *Applier) bumpEvent(ctx context.Context, ns, name string, count int32, now metav1.Time) error {
	events := a.kube.Events(ns)
	ev, err := events.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ev.Count += count
	ev.LastTimestamp = now
	_, err = events.Update(ctx, ev, metav1.UpdateOptions{})
	return err
}

// eventName is the object's name and a hash of what the Event is about, so
// that the same failure maps to the same Event.
func eventName(ref corev1.ObjectReference, message string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{ref.APIVersion, ref.Kind, ref.Namespace, ref.Name, string(ref.UID), message}, "\x00")))
	name := ref.Name
	if len(name) > 200 {
		name = name[:200]
	}
	return name + "." + hex.EncodeToString(sum[:8])
}
