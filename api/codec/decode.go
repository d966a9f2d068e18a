package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// maxDocumentErrors bounds the documents DecodeAll reports errors for.
const maxDocumentErrors = 10

// Option changes a limit of decoding.
type Option func(*options)

type options struct {
	maxBytes int // largest input, and largest document once converted to JSON
	maxDepth int // deepest nesting of objects and arrays
}

func newOptions(opts []Option) *options {
	o := &options{maxBytes: DefaultMaxBytes, maxDepth: DefaultMaxDepth}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// WithMaxBytes sets the largest input accepted, in bytes (default
// DefaultMaxBytes).
func WithMaxBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxBytes = n
		}
	}
}

// WithMaxDepth sets the deepest nesting of objects and arrays accepted
// (default DefaultMaxDepth).
func WithMaxDepth(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxDepth = n
		}
	}
}

// Decode decodes a single YAML or JSON document into the object its
// apiVersion and kind name. Decoding is strict: unknown fields, duplicate
// fields and values of the wrong type are errors naming the field path
// (see FieldErrors). Defaults are not applied and the object is not
// validated: call SetDefaults and Validate. The apiVersion stays as written,
// Tether's or Karmada's (see Canonical).
func Decode(data []byte, opts ...Option) (Object, error) {
	docs, err := Split(data, opts...)
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 0:
		return nil, ErrNoDocument
	case 1:
		return DecodeDocument(&docs[0])
	default:
		return nil, fmt.Errorf("%w: the input holds %d", ErrMultipleDocuments, len(docs))
	}
}

// DecodeAll decodes every document of a YAML stream or JSON sequence, as
// Decode does. On failure it returns the errors of the failing documents
// (at most 10, joined; each a *DocumentError) and no objects.
func DecodeAll(data []byte, opts ...Option) ([]Object, error) {
	docs, err := Split(data, opts...)
	if err != nil {
		return nil, err
	}
	objs := make([]Object, 0, len(docs))
	var errs []error
	for i := range docs {
		obj, err := DecodeDocument(&docs[i])
		if err != nil {
			errs = append(errs, err)
			if len(errs) == maxDocumentErrors {
				break
			}
			continue
		}
		objs = append(objs, obj)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return objs, nil
}

// DecodeDocument strictly decodes one document of Split.
func DecodeDocument(doc *Document) (Object, error) {
	derr := &DocumentError{Index: doc.Index, APIVersion: doc.APIVersion, Kind: doc.Kind}
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc.JSON))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		derr.Errs = []error{fmt.Errorf("%w: %v", ErrSyntax, err)}
		return nil, derr
	}
	top, ok := v.(map[string]any)
	if !ok {
		derr.Errs = []error{fmt.Errorf("%w: expected an object, got %s", ErrSyntax, JSONType(v))}
		return nil, derr
	}
	derr.Namespace, derr.Name = peekName(top)
	info, errs := lookupDocument(top)
	if len(errs) > 0 {
		derr.Errs = errs
		return nil, derr
	}
	obj := info.New()
	if errs := decodeInto(doc.JSON, v, obj); len(errs) > 0 {
		derr.Errs = errs
		return nil, derr
	}
	return obj, nil
}

// lookupDocument finds the kind of a document from its apiVersion and kind.
func lookupDocument(top map[string]any) (*KindInfo, []error) {
	var errs []error
	apiVersion, err := typeMetaField(top, "apiVersion")
	if err != nil {
		errs = append(errs, err)
	}
	kind, err := typeMetaField(top, "kind")
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	info, ok := Lookup(apiVersion, kind)
	if !ok {
		return nil, []error{fmt.Errorf("%w %s in apiVersion %s", ErrUnknownKind, kind, apiVersion)}
	}
	return info, nil
}

func typeMetaField(top map[string]any, name string) (string, error) {
	v, ok := top[name]
	if !ok || v == nil || v == "" {
		return "", &FieldError{Type: ErrorTypeRequired, Path: name}
	}
	s, ok := v.(string)
	if !ok {
		return "", wrongType(field.NewPath(name), "string", v)
	}
	return s, nil
}

func peekName(top map[string]any) (namespace, name string) {
	meta, _ := top["metadata"].(map[string]any)
	namespace, _ = meta["namespace"].(string)
	name, _ = meta["name"].(string)
	return namespace, name
}

// decodeInto checks the generic value v against obj's type, then decodes js
// into obj with strict checks for what the walk cannot see (duplicates).
func decodeInto(js []byte, v any, obj Object) []error {
	var c checker
	c.check(v, reflect.TypeOf(obj), nil)
	if len(c.errs) > 0 {
		return fieldErrs(c.errs)
	}
	strict, err := sigsjson.UnmarshalStrict(js, obj)
	if err != nil {
		return []error{fmt.Errorf("%w: %v", ErrSyntax, err)}
	}
	var errs []error
	for _, se := range strict {
		errs = append(errs, strictError(se))
	}
	return errs
}

func fieldErrs(in []*FieldError) []error {
	out := make([]error, len(in))
	for i, e := range in {
		out[i] = e
	}
	return out
}

// strictError converts a strict-decoding error of sigs.k8s.io/json.
func strictError(err error) error {
	fe, ok := err.(sigsjson.FieldError)
	if !ok {
		return err
	}
	t := ErrorTypeUnknown
	if bytes.HasPrefix([]byte(err.Error()), []byte("duplicate field")) {
		t = ErrorTypeDuplicate
	}
	return &FieldError{Type: t, Path: fe.FieldPath()}
}
