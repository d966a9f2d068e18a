package ctl

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
	"github.com/tetherproj/tether/internal/interpreter/conformance"
)

// readInputs reads the files the operation needs and checks that they are
// there. Every error names the flag and the file.
func readInputs(f interpretFlags, op configv1alpha1.InterpreterOperation, replicasSet bool) (interpretInput, error) {
	in := interpretInput{replicas: f.replicas}
	var err error
	if f.desired != "" {
		if in.desired, err = readObject("--desired", f.desired); err != nil {
			return in, err
		}
	}
	if f.observed != "" {
		if in.observed, err = readObject("--observed", f.observed); err != nil {
			return in, err
		}
	}
	if f.statusItems != "" {
		if in.items, err = readStatusItems(f.statusItems); err != nil {
			return in, err
		}
	}
	switch {
	case op == configv1alpha1.InterpreterOperationRetain && (in.desired == nil || in.observed == nil):
		return in, errors.New("Retain needs --desired and --observed")
	case in.desired == nil && in.observed == nil:
		return in, fmt.Errorf("%s needs an object: --desired or --observed", op)
	case op == configv1alpha1.InterpreterOperationReviseReplica && !replicasSet:
		return in, errors.New("ReviseReplica needs --replicas")
	}
	return in, nil
}

// readObject decodes one object as the conformance oracle does
// (conformance.ReadObject: YAML or JSON, integral numbers become int64,
// others float64), with errors that name the flag and the file.
func readObject(flag, path string) (*unstructured.Unstructured, error) {
	obj, err := conformance.ReadObject(path)
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pathErr):
		return nil, fmt.Errorf("read %s: %w", flag, pathErr)
	case errors.Is(err, io.EOF):
		return nil, fmt.Errorf("read %s %s: no object in the file", flag, path)
	case err != nil:
		// Drop conformance's own "decode <path>" context: ours names the flag.
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return nil, fmt.Errorf("read %s %s: %w", flag, path, err)
	case obj.GetKind() == "" || obj.GetAPIVersion() == "":
		return nil, fmt.Errorf("read %s %s: the object has no apiVersion or kind", flag, path)
	}
	return obj, nil
}

// readStatusItems decodes a list of AggregatedStatusItem
// (conformance.DecodeStatusItems). An empty list stays empty (not nil):
// scripts see an empty table rather than nil.
func readStatusItems(path string) ([]configv1alpha1.AggregatedStatusItem, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read --status-items: %w", err)
	}
	items, err := conformance.DecodeStatusItems(raw)
	if err != nil {
		return nil, fmt.Errorf("read --status-items %s: want a list of {clusterName, applied, health, status}: %w", path, err)
	}
	return items, nil
}

// readCustomizations decodes the ResourceInterpreterCustomization documents
// of a file; any other kind is an error (interpreter.DecodeCustomizations).
func readCustomizations(path string) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read --customization: %w", err)
	}
	cs, err := interpreter.DecodeCustomizations(raw)
	if err != nil {
		return nil, fmt.Errorf("read --customization %s: %w", path, err)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("read --customization %s: no ResourceInterpreterCustomization in the file", path)
	}
	return cs, nil
}
