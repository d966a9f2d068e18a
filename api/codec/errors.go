package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Errors that Decode and DecodeAll wrap; test with errors.Is.
var (
	// ErrUnknownKind: the document's apiVersion and kind are not one of the
	// objects of this package (see Known). Documents of other kinds are
	// resource templates and are handled elsewhere.
	ErrUnknownKind = errors.New("codec: unknown kind")
	// ErrTooLarge: the input or a document exceeds the size limit.
	ErrTooLarge = errors.New("codec: input too large")
	// ErrTooDeep: a document nests deeper than the depth limit.
	ErrTooDeep = errors.New("codec: input nested too deeply")
	// ErrNoDocument: the input holds no document (Decode) or is empty.
	ErrNoDocument = errors.New("codec: no document")
	// ErrMultipleDocuments: Decode was given more than one document.
	ErrMultipleDocuments = errors.New("codec: more than one document")
	// ErrSyntax: the input is not valid YAML or JSON, or not valid UTF-8.
	ErrSyntax = errors.New("codec: syntax error")
)

// ErrorType classifies a FieldError.
type ErrorType string

// Field error types.
const (
	// ErrorTypeUnknown is a field the object does not have.
	ErrorTypeUnknown ErrorType = "UnknownField"
	// ErrorTypeDuplicate is a field given twice.
	ErrorTypeDuplicate ErrorType = "DuplicateField"
	// ErrorTypeWrongType is a value of the wrong JSON type.
	ErrorTypeWrongType ErrorType = "WrongType"
	// ErrorTypeRequired is a missing field that decoding needs (apiVersion
	// and kind; other required fields are reported by Validate).
	ErrorTypeRequired ErrorType = "Required"
	// ErrorTypeInvalid is a value its type rejects (a malformed time or
	// quantity, an integer out of range ...).
	ErrorTypeInvalid ErrorType = "Invalid"
)

// FieldError is one problem at one field of a document. Path is written
// like validation paths: spec.placement.clusterAffinities[0].affinityName.
type FieldError struct {
	Type   ErrorType
	Path   string
	Detail string
}

// Error renders unknown and duplicate fields as Kubernetes' strict decoding
// does (unknown field "spec.foo") and other problems as "path: detail".
func (e *FieldError) Error() string {
	switch e.Type {
	case ErrorTypeUnknown:
		return fmt.Sprintf("unknown field %q", e.Path)
	case ErrorTypeDuplicate:
		return fmt.Sprintf("duplicate field %q", e.Path)
	case ErrorTypeRequired:
		return e.Path + ": required field is missing"
	default:
		return e.Path + ": " + e.Detail
	}
}

// FieldPath returns the path of the field.
func (e *FieldError) FieldPath() string { return e.Path }

// DocumentError is the failure to decode one document of the input.
type DocumentError struct {
	// Index is the document's position in the input, from 1.
	Index int
	// APIVersion, Kind, Namespace and Name identify the document as far as
	// they could be read.
	APIVersion, Kind, Namespace, Name string
	// Errs are the problems: *FieldError values, or one error wrapping a
	// sentinel such as ErrSyntax or ErrUnknownKind.
	Errs []error
}

// Error names the document and lists its problems.
func (e *DocumentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "document %d", e.Index)
	if e.Kind != "" {
		fmt.Fprintf(&b, " (%s", e.Kind)
		if e.Name != "" {
			b.WriteString(" ")
			if e.Namespace != "" {
				b.WriteString(e.Namespace + "/")
			}
			b.WriteString(e.Name)
		}
		b.WriteString(")")
	}
	b.WriteString(": ")
	for i, err := range e.Errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the problems, so that errors.Is and errors.As see them.
func (e *DocumentError) Unwrap() []error { return e.Errs }

// FieldErrors returns every *FieldError inside err (a *DocumentError, or
// the joined errors of DecodeAll).
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case *FieldError:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

func wrongType(path *field.Path, want string, v any) *FieldError {
	detail := fmt.Sprintf("expected %s, got %s", want, JSONType(v))
	if _, isBool := v.(bool); isBool && want == "string" {
		// YAML 1.1, which Kubernetes and Karmada read, makes y, n, yes,
		// no, on and off booleans.
		detail += " (quote YAML words such as yes, no, on, off, y and n)"
	}
	return &FieldError{Type: ErrorTypeWrongType, Path: path.String(), Detail: detail}
}

// JSONType names the JSON type of a decoded value (null, object, array,
// string, number, boolean), for errors that say what was found.
func JSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "boolean"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// goTypeName names the JSON type a Go type expects.
func goTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Float32, reflect.Float64:
		return "number"
	default:
		if t.ConvertibleTo(reflect.TypeFor[int64]()) {
			return "integer"
		}
		return t.String()
	}
}

// child returns the path of a struct field; a nil parent is the root.
func child(parent *field.Path, name string) *field.Path {
	if parent == nil {
		return field.NewPath(name)
	}
	return parent.Child(name)
}

func keyPath(parent *field.Path, key string) *field.Path {
	if parent == nil {
		return field.NewPath(key)
	}
	return parent.Key(key)
}

func index(parent *field.Path, i int) *field.Path {
	if parent == nil {
		return field.NewPath(fmt.Sprintf("[%d]", i))
	}
	return parent.Index(i)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
