package overrides

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// patchOp is one RFC 6902 operation as Karmada builds it. Value is always
// sent, as null when there is none (Karmada's remove ops carry value null).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// Operators as they appear in RFC 6902 and in the policy API.
const (
	opAdd     = "add"
	opRemove  = "remove"
	opReplace = "replace"
)

// decodePatch turns ops into an evanphx/json-patch v5 patch.
func decodePatch(ops []patchOp) (jsonpatch.Patch, error) {
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encode json patch: %w", err)
	}
	return jsonpatch.DecodePatch(b)
}

// applyPatch applies ops, as one patch, to obj in place, with the library's
// default options: replace or remove of a missing path fails, add needs the
// parent, "/-" appends. An empty list leaves obj untouched.
func applyPatch(obj *unstructured.Unstructured, ops []patchOp) error {
	if len(ops) == 0 {
		return nil
	}
	patch, err := decodePatch(ops)
	if err != nil {
		return err
	}
	doc, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	out, err := patch.Apply(doc)
	if err != nil {
		return err
	}
	return obj.UnmarshalJSON(out)
}

// applyRawJSON applies ops to a JSON document held as text.
func applyRawJSON(raw []byte, ops []patchOp) ([]byte, error) {
	patch, err := decodePatch(ops)
	if err != nil {
		return nil, err
	}
	return patch.Apply(raw)
}

// applyRawYAML applies ops to a YAML document held as text: YAML to JSON,
// patch, back to YAML. Keys come back sorted and formatting normalised.
func applyRawYAML(raw []byte, ops []patchOp) ([]byte, error) {
	doc, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("convert yaml to json: %w", err)
	}
	if doc, err = applyRawJSON(doc, ops); err != nil {
		return nil, err
	}
	out, err := yaml.JSONToYAML(doc)
	if err != nil {
		return nil, fmt.Errorf("convert json to yaml: %w", err)
	}
	return out, nil
}

// rawValue returns a policy's raw JSON value as a patch value: the bytes
// themselves, or null when empty.
func rawValue(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(raw)
}
