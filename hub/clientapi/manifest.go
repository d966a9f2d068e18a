package clientapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tetherproj/tether/api/codec"
)

// document is one object of an Apply or Simulate input.
type document struct {
	// index is the object's position in the input, from 1, after JSON
	// arrays and Lists are expanded.
	index int
	// js is the object as JSON; obj the same, decoded with json.Number.
	js  []byte
	obj map[string]any
	// apiVersion and kind as written; empty when missing or not strings.
	apiVersion, kind string
}

// parseManifests splits multi-document YAML, JSON values, JSON arrays and
// Kubernetes Lists into objects, with the codec's size, depth, alias and
// UTF-8 limits. Input that cannot be parsed at all is ErrInvalid.
func parseManifests(data []byte, maxBytes int) ([]document, error) {
	docs, err := codec.Split(data, codec.WithMaxBytes(maxBytes))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var out []document
	for _, d := range docs {
		v, err := decodeJSON(d.JSON)
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %v", ErrInvalid, d.Index, err)
		}
		if out, err = appendObjects(out, v, d.Index); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the input holds no object", ErrInvalid)
	}
	return out, nil
}

// appendObjects appends v, or the elements of v when it is a JSON array or
// a List, to out.
func appendObjects(out []document, v any, index int) ([]document, error) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			var err error
			if out, err = appendObjects(out, e, index); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		if items, ok := listItems(x); ok {
			return appendObjects(out, items, index)
		}
		js, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %v", ErrInvalid, index, err)
		}
		apiVersion, _ := x["apiVersion"].(string)
		kind, _ := x["kind"].(string)
		return append(out, document{index: len(out) + 1, js: js, obj: x, apiVersion: apiVersion, kind: kind}), nil
	default:
		return nil, fmt.Errorf("%w: document %d: expected an object, got %s", ErrInvalid, index, codec.JSONType(v))
	}
}

// listItems returns the items of a Kubernetes List (kind List, or a typed
// list such as DeploymentList, with an items array).
func listItems(obj map[string]any) ([]any, bool) {
	kind, _ := obj["kind"].(string)
	if kind != "List" && !strings.HasSuffix(kind, "List") {
		return nil, false
	}
	items, ok := obj["items"].([]any)
	return items, ok
}

// decodeJSON decodes one JSON value keeping numbers exact (json.Number),
// so that large integers survive a round trip.
func decodeJSON(js []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// decodeObject decodes a JSON object.
func decodeObject(js []byte) (map[string]any, error) {
	v, err := decodeJSON(js)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %s", codec.JSONType(v))
	}
	return m, nil
}
