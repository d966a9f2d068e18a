package clientapi

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/validation/field"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/hub/store"
)

// What a caller may see of an object (caller.view). The viewer role sees Secrets
// without their data: every value of a core/v1 Secret's data and
// stringData is replaced by "" (the keys stay, so a viewer can still see
// which keys a Secret holds), and the object is marked with
// RedactedAnnotation so that nobody mistakes it for an empty Secret. Apply
// refuses a Secret carrying the annotation: applying a viewer's read back
// would otherwise wipe the data. Admins and editors see everything.

// RedactedAnnotation marks a Secret whose data values were hidden from the
// reader.
const RedactedAnnotation = "secret.tether.io/redacted"

// redactedNote is RedactedAnnotation's value.
const redactedNote = "data and stringData values are hidden from the read-only role"

// view is how much of an object a caller may see.
type view int

const (
	// fullView shows objects as stored.
	fullView view = iota
	// redactedView hides Secret data.
	redactedView
)

// isSecret reports whether an apiVersion and kind name a core/v1 Secret.
func isSecret(apiVersion, kind string) bool { return apiVersion == "v1" && kind == "Secret" }

// redact hides obj's Secret data in view v; other objects are unchanged.
func (v view) redact(key store.ObjectRef, obj map[string]any) {
	if v == fullView || key.Group != "" || key.Kind != "Secret" {
		return
	}
	redactSecret(obj)
}

func redactSecret(obj map[string]any) {
	for _, field := range []string{"data", "stringData"} {
		if m, ok := obj[field].(map[string]any); ok {
			for k := range m {
				m[k] = ""
			}
		}
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	ann, ok := meta["annotations"].(map[string]any)
	if !ok {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[RedactedAnnotation] = redactedNote
}

// redactJSON is redact for an object as JSON: a Secret's JSON is decoded,
// redacted and encoded again; anything else is returned as is.
func (v view) redactJSON(js []byte) []byte {
	if v == fullView || len(js) == 0 {
		return js
	}
	var obj map[string]any
	if json.Unmarshal(js, &obj) != nil {
		return js
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if !isSecret(apiVersion, kind) {
		return js
	}
	redactSecret(obj)
	out, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return out
}

// redactSimulation hides Secret data in a Simulate response: the inputs
// as prepared and the objects rendered for each cluster.
func (v view) redactSimulation(resp *hubv1.SimulateResponse) {
	if v == fullView || resp == nil {
		return
	}
	for _, in := range resp.GetInputs() {
		in.ObjectJson = v.redactJSON(in.ObjectJson)
	}
	for _, rc := range resp.GetRendered() {
		for i, js := range rc.ObjectsJson {
			rc.ObjectsJson[i] = v.redactJSON(js)
		}
	}
}

// redactedErrors refuses a Secret that carries RedactedAnnotation: it is a
// viewer's read, with empty values, and applying it would wipe the stored
// data.
func redactedErrors(d document, meta map[string]any) field.ErrorList {
	if !isSecret(d.apiVersion, d.kind) {
		return nil
	}
	ann, _ := meta["annotations"].(map[string]any)
	if _, ok := ann[RedactedAnnotation]; !ok {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "annotations").Key(RedactedAnnotation),
		"this Secret was read with its data hidden (read-only role); applying it would replace the data with empty values: apply the Secret from its source")}
}
