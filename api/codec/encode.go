package codec

import (
	"encoding/json"
	"fmt"
	"reflect"

	"sigs.k8s.io/yaml"
)

// Encode returns obj as JSON, with the apiVersion it has (the one it was
// decoded with unless Canonical changed it). Decoding then encoding a
// document gives back the same JSON value, field for field, except for
// normalisations Karmada's API server makes too: optional fields written
// with their zero value (false, 0, "", null) are dropped, required fields
// left out are written as null or empty, spec.placement of a propagation
// policy is always written, and quantities take their canonical form
// ("0.5" becomes "500m").
func Encode(obj Object) ([]byte, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", describe(obj), err)
	}
	return js, nil
}

// EncodeYAML returns obj as YAML, keys sorted.
func EncodeYAML(obj Object) ([]byte, error) {
	js, err := Encode(obj)
	if err != nil {
		return nil, err
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", describe(obj), err)
	}
	return y, nil
}

// Clone returns a deep copy of obj, made by encoding and decoding it.
func Clone[T Object](obj T) (T, error) {
	var zero T
	js, err := json.Marshal(obj)
	if err != nil {
		return zero, fmt.Errorf("clone %s: %w", describe(obj), err)
	}
	out, ok := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
	if !ok {
		return zero, fmt.Errorf("clone %s: not a pointer to a struct: %T", describe(obj), obj)
	}
	if err := json.Unmarshal(js, out); err != nil {
		return zero, fmt.Errorf("clone %s: %w", describe(obj), err)
	}
	return out, nil
}

func describe(obj Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if ns := obj.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", kind, ns, obj.GetName())
	}
	return fmt.Sprintf("%s %s", kind, obj.GetName())
}
