package ctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter"
)

// yamlSniffBytes is how far the YAML-or-JSON decoder looks, in bytes, to
// tell JSON from YAML.
const yamlSniffBytes = 4096

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

// readObject decodes one object, YAML or JSON, the way the hub decodes
// resource templates: integral numbers become int64, others float64.
func readObject(flag, path string) (*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", flag, err)
	}
	obj := &unstructured.Unstructured{}
	err = utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), yamlSniffBytes).Decode(obj)
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s %s: no object in the file", flag, path)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", flag, path, err)
	}
	if obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, fmt.Errorf("read %s %s: the object has no apiVersion or kind", flag, path)
	}
	return obj, nil
}

// readStatusItems decodes a list of AggregatedStatusItem. An empty list
// stays empty (not nil): scripts see an empty table rather than nil.
func readStatusItems(path string) ([]configv1alpha1.AggregatedStatusItem, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read --status-items: %w", err)
	}
	js, err := utilyaml.ToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("read --status-items %s: %w", path, err)
	}
	var items []configv1alpha1.AggregatedStatusItem
	if err := json.Unmarshal(js, &items); err != nil {
		return nil, fmt.Errorf("read --status-items %s: want a list of {clusterName, applied, health, status}: %w", path, err)
	}
	if items == nil && string(bytes.TrimSpace(js)) != "null" {
		items = []configv1alpha1.AggregatedStatusItem{}
	}
	return items, nil
}

// readCustomizations decodes the ResourceInterpreterCustomization documents
// of a file.
func readCustomizations(path string) ([]interpreter.Customization, error) {
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
	for _, c := range cs {
		if c.Kind != configv1alpha1.KindResourceInterpreterCustomization {
			return nil, fmt.Errorf("read --customization %s: %q is a %s, not a %s",
				path, c.Metadata.Name, c.Kind, configv1alpha1.KindResourceInterpreterCustomization)
		}
	}
	return cs, nil
}
