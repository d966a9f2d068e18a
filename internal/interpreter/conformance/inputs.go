package conformance

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
)

// decoderBufferSize is the YAML-or-JSON sniffing buffer in bytes, as the
// oracle uses it.
const decoderBufferSize = 4096

// ReadObject decodes an object file the way the oracle does:
// NewYAMLOrJSONDecoder into an Unstructured, so integral numbers are int64
// and others float64 (a YAML "2.0" is int64 2, a JSON 2.0 is float64).
func ReadObject(path string) (*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	obj := &unstructured.Unstructured{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), decoderBufferSize).Decode(obj); err != nil {
		return nil, fmt.Errorf("conformance: decode %s: %w", path, err)
	}
	return obj, nil
}

// ReadStatusItems decodes a status-items file (a YAML list of
// AggregatedStatusItem) with DecodeStatusItems. A file holding [] or null
// gives an empty, non-nil slice.
func ReadStatusItems(path string) ([]configv1alpha1.AggregatedStatusItem, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	items, err := DecodeStatusItems(raw)
	if err != nil {
		return nil, fmt.Errorf("conformance: decode %s: %w", path, err)
	}
	if items == nil {
		items = []configv1alpha1.AggregatedStatusItem{}
	}
	return items, nil
}

// DecodeStatusItems decodes a YAML or JSON list of AggregatedStatusItem
// with yaml.ToJSON and json.Unmarshal. Only a document holding null (an
// empty one included) gives nil; an empty list gives an empty slice.
// `tetherctl interpret` decodes its --status-items with it.
func DecodeStatusItems(raw []byte) ([]configv1alpha1.AggregatedStatusItem, error) {
	js, err := utilyaml.ToJSON(raw)
	if err != nil {
		return nil, err
	}
	var items []configv1alpha1.AggregatedStatusItem
	if err := json.Unmarshal(js, &items); err != nil {
		return nil, err
	}
	if items == nil && string(bytes.TrimSpace(js)) != "null" {
		items = []configv1alpha1.AggregatedStatusItem{}
	}
	return items, nil
}

// ReadDocuments decodes every document of a multi-document YAML or JSON file
// (a customization file) with NewYAMLOrJSONDecoder until EOF, skipping empty
// documents.
func ReadDocuments(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: %w", err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), decoderBufferSize)
	var docs []*unstructured.Unstructured
	for {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("conformance: decode %s: %w", path, err)
		}
		if t := bytes.TrimSpace(doc); len(t) == 0 || string(t) == "null" || string(t) == "{}" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(doc); err != nil {
			return nil, fmt.Errorf("conformance: decode %s: %w", path, err)
		}
		docs = append(docs, obj)
	}
}
