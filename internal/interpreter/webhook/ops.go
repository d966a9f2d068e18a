package webhook

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/luavm"
)

// Every operation returns (result, enabled, err): enabled is false when no
// webhook matches the object's GVK and the operation.

func typeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: ContextAPIVersion, Kind: ContextKind}
}

func randomUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// request builds the request for obj; replicas is always set, 0 unless the
// operation is ReviseReplica.
func (w *Interpreter) request(obj *unstructured.Unstructured, op configv1alpha1.InterpreterOperation, replicas int32) (*Request, error) {
	raw, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	gvk := obj.GroupVersionKind()
	return &Request{
		UID:             types.UID(w.newUID()),
		Kind:            metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Name:            obj.GetName(),
		Namespace:       obj.GetNamespace(),
		Operation:       op,
		Object:          runtime.RawExtension{Raw: raw},
		DesiredReplicas: &replicas,
	}, nil
}

// do finds the hook, sends the request built by build and returns the response.
func (w *Interpreter) do(ctx context.Context, obj *unstructured.Unstructured, op configv1alpha1.InterpreterOperation, replicas int32, build func(*Request) error) (*Response, *Request, bool, error) {
	h := w.find(obj.GroupVersionKind(), op)
	if h == nil {
		return nil, nil, false, nil
	}
	req, err := w.request(obj, op, replicas)
	if err != nil {
		return nil, nil, true, err
	}
	if build != nil {
		if err := build(req); err != nil {
			return nil, nil, true, err
		}
	}
	resp, err := w.call(ctx, h, req)
	return resp, req, true, err
}

// verify checks a response against its request (Karmada's
// verifyResourceInterpreterContext). The webhook's own text it quotes is
// bounded and sanitized.
func verify(req *Request, resp *Response) error {
	if resp == nil {
		return errors.New("response is empty")
	}
	if resp.UID != req.UID {
		return fmt.Errorf("response uid %q does not match request uid %q", sanitize(string(resp.UID)), req.UID)
	}
	if !resp.Successful {
		if resp.Status == nil {
			return errors.New("unsuccessful response without status")
		}
		return fmt.Errorf("interpretation failed (code %d): %s", resp.Status.Code, sanitize(resp.Status.Message))
	}
	switch req.Operation {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		if resp.Replicas == nil {
			return errors.New("response.replicas is required for InterpretReplica")
		}
	case configv1alpha1.InterpreterOperationReviseReplica, configv1alpha1.InterpreterOperationRetain,
		configv1alpha1.InterpreterOperationAggregateStatus:
		if len(resp.Patch) > 0 && (resp.PatchType == nil || *resp.PatchType != PatchTypeJSONPatch) {
			return fmt.Errorf("response.patchType must be %s", PatchTypeJSONPatch)
		}
	case configv1alpha1.InterpreterOperationInterpretDependency:
		return luavm.VerifyDependencies(resp.Dependencies)
	case configv1alpha1.InterpreterOperationInterpretStatus:
		if resp.RawStatus == nil {
			return errors.New("response.rawStatus is required for InterpretStatus")
		}
	case configv1alpha1.InterpreterOperationInterpretHealth:
		if resp.Healthy == nil {
			return errors.New("response.healthy is required for InterpretHealth")
		}
	}
	return nil
}

// patched applies the response's JSON patch to the request object.
func patched(req *Request, resp *Response) (*unstructured.Unstructured, error) {
	raw := req.Object.Raw
	if len(resp.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			return nil, fmt.Errorf("decode webhook patch: %w", err)
		}
		if raw, err = p.Apply(raw); err != nil {
			return nil, fmt.Errorf("apply webhook patch: %w", err)
		}
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decode patched object: %w", err)
	}
	return out, nil
}

// GetReplicas asks for the replica count and requirements.
func (w *Interpreter) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (int32, *configv1alpha1.ReplicaRequirements, bool, error) {
	resp, _, ok, err := w.do(ctx, obj, configv1alpha1.InterpreterOperationInterpretReplica, 0, nil)
	if !ok || err != nil {
		return 0, nil, ok, err
	}
	return *resp.Replicas, resp.ReplicaRequirements, true, nil
}

// GetComponents asks for the components.
func (w *Interpreter) GetComponents(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.Component, bool, error) {
	resp, _, ok, err := w.do(ctx, obj, configv1alpha1.InterpreterOperationInterpretComponent, 0, nil)
	if !ok || err != nil {
		return nil, ok, err
	}
	return resp.Components, true, nil
}

// ReviseReplica asks for a patch setting the replicas.
func (w *Interpreter) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replica int64) (*unstructured.Unstructured, bool, error) {
	resp, req, ok, err := w.do(ctx, obj, configv1alpha1.InterpreterOperationReviseReplica, int32(replica), nil)
	if !ok || err != nil {
		return nil, ok, err
	}
	out, err := patched(req, resp)
	return out, true, err
}

// Retain asks for a patch of desired that keeps values from observed.
func (w *Interpreter) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, bool, error) {
	resp, req, ok, err := w.do(ctx, desired, configv1alpha1.InterpreterOperationRetain, 0, func(r *Request) error {
		raw, err := observed.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encode observed object: %w", err)
		}
		r.ObservedObject = &runtime.RawExtension{Raw: raw}
		return nil
	})
	if !ok || err != nil {
		return nil, ok, err
	}
	out, err := patched(req, resp)
	return out, true, err
}

// AggregateStatus asks for a patch aggregating the member statuses.
func (w *Interpreter) AggregateStatus(ctx context.Context, obj *unstructured.Unstructured, items []configv1alpha1.AggregatedStatusItem) (*unstructured.Unstructured, bool, error) {
	resp, req, ok, err := w.do(ctx, obj, configv1alpha1.InterpreterOperationAggregateStatus, 0, func(r *Request) error {
		r.AggregatedStatus = items
		return nil
	})
	if !ok || err != nil {
		return nil, ok, err
	}
	out, err := patched(req, resp)
	return out, true, err
}

// ReflectStatus asks for the status to report.
func (w *Interpreter) ReflectStatus(ctx context.Context, obj *unstructured.Unstructured) (*runtime.RawExtension, bool, error) {
	resp, _, ok, err := w.do(ctx, obj, configv1alpha1.InterpreterOperationInterpretStatus, 0, nil)
	if !ok || err != nil {
		return nil, ok, err
	}
	return resp.RawStatus, true, nil
}

// InterpretHealth asks whether the object is healthy.
func (w *Interpreter) InterpretHealth(ctx context.Context, obj *unstructured.Unstructured) (bool, bool, error) {
	resp, _, ok, err := w.do(ctx, obj, configv1alpha1.InterpreterOperationInterpretHealth, 0, nil)
	if !ok || err != nil {
		return false, ok, err
	}
	return *resp.Healthy, true, nil
}

// GetDependencies asks for the objects obj depends on.
func (w *Interpreter) GetDependencies(ctx context.Context, obj *unstructured.Unstructured) ([]configv1alpha1.DependentObjectReference, bool, error) {
	resp, _, ok, err := w.do(ctx, obj, configv1alpha1.InterpreterOperationInterpretDependency, 0, nil)
	if !ok || err != nil {
		return nil, ok, err
	}
	return resp.Dependencies, true, nil
}
