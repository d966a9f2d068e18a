package codec

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxFieldErrors bounds the problems reported for one document, so that
// garbage input does not produce megabytes of errors.
const maxFieldErrors = 20

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checker walks a generic JSON value (decoded with UseNumber) alongside the
// Go type it is meant for and records unknown fields and values of the wrong
// JSON type, each with its full field path. encoding/json stops at the first
// wrong type and names the path without list indices; the checker names
// every problem precisely before the typed decode runs.
type checker struct {
	errs []*FieldError
}

func (c *checker) add(e *FieldError) {
	if len(c.errs) < maxFieldErrors {
		c.errs = append(c.errs, e)
	}
}

func (c *checker) full() bool { return len(c.errs) >= maxFieldErrors }

// check records the problems of v as a value of type t at path. A JSON null
// is accepted everywhere, as encoding/json accepts it.
func (c *checker) check(v any, t reflect.Type, path *field.Path) {
	if v == nil || c.full() {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshalerType) {
		c.checkUnmarshaler(v, t, path)
		return
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		c.expect(v, "string", path)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		c.checkStruct(v, t, path)
	case reflect.Map:
		c.checkMap(v, t, path)
	case reflect.Slice, reflect.Array:
		c.checkSlice(v, t, path)
	case reflect.String:
		c.expect(v, "string", path)
	case reflect.Bool:
		c.expect(v, "boolean", path)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		c.checkInteger(v, t, path)
	case reflect.Float32, reflect.Float64:
		c.expect(v, "number", path)
	case reflect.Interface:
		// any JSON value fits
	default:
		c.add(wrongType(path, t.Kind().String(), v))
	}
}

// expect records v unless its JSON type is want.
func (c *checker) expect(v any, want string, path *field.Path) {
	if JSONType(v) != want {
		c.add(wrongType(path, want, v))
	}
}

// checkUnmarshaler runs the type's own UnmarshalJSON (time, quantity, raw
// JSON ...) on the value, so that its complaint is reported with the path.
func (c *checker) checkUnmarshaler(v any, t reflect.Type, path *field.Path) {
	raw, err := json.Marshal(v)
	if err != nil {
		c.add(&FieldError{Type: ErrorTypeInvalid, Path: path.String(), Detail: err.Error()})
		return
	}
	target := reflect.New(t).Interface().(json.Unmarshaler)
	err = target.UnmarshalJSON(raw)
	if err == nil {
		return
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		c.add(wrongType(path, goTypeName(te.Type), v))
		return
	}
	c.add(&FieldError{Type: ErrorTypeInvalid, Path: path.String(), Detail: err.Error()})
}

func (c *checker) checkStruct(v any, t reflect.Type, path *field.Path) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.add(wrongType(path, "object", v))
		return
	}
	fields := fieldsOf(t)
	for _, key := range sortedKeys(obj) {
		p := child(path, key)
		ft, known := fields[key]
		if !known {
			c.add(&FieldError{Type: ErrorTypeUnknown, Path: p.String()})
			continue
		}
		c.check(obj[key], ft, p)
	}
}

func (c *checker) checkMap(v any, t reflect.Type, path *field.Path) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.add(wrongType(path, "object", v))
		return
	}
	if t.Key().Kind() != reflect.String {
		c.add(&FieldError{Type: ErrorTypeInvalid, Path: path.String(), Detail: "unsupported map key type " + t.Key().String()})
		return
	}
	for _, key := range sortedKeys(obj) {
		c.check(obj[key], t.Elem(), keyPath(path, key))
	}
}

func (c *checker) checkSlice(v any, t reflect.Type, path *field.Path) {
	if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
		c.checkBytes(v, path)
		return
	}
	items, ok := v.([]any)
	if !ok {
		c.add(wrongType(path, "array", v))
		return
	}
	if t.Kind() == reflect.Array && len(items) > t.Len() {
		c.add(&FieldError{Type: ErrorTypeInvalid, Path: path.String(),
			Detail: fmt.Sprintf("at most %d items, got %d", t.Len(), len(items))})
	}
	for i, item := range items {
		c.check(item, t.Elem(), index(path, i))
	}
}

// checkBytes checks a []byte field, which JSON holds as base64.
func (c *checker) checkBytes(v any, path *field.Path) {
	s, ok := v.(string)
	if !ok {
		c.add(wrongType(path, "string", v))
		return
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		c.add(&FieldError{Type: ErrorTypeInvalid, Path: path.String(), Detail: "expected base64: " + err.Error()})
	}
}

// checkInteger accepts a JSON number that is an integer within t's range.
func (c *checker) checkInteger(v any, t reflect.Type, path *field.Path) {
	n, ok := v.(json.Number)
	if !ok {
		c.add(wrongType(path, "integer", v))
		return
	}
	i, ok := new(big.Int).SetString(n.String(), 10)
	if !ok {
		c.add(&FieldError{Type: ErrorTypeWrongType, Path: path.String(),
			Detail: fmt.Sprintf("expected integer, got number %s", n)})
		return
	}
	lo, hi := intRange(t)
	if i.Cmp(lo) < 0 || i.Cmp(hi) > 0 {
		c.add(&FieldError{Type: ErrorTypeInvalid, Path: path.String(),
			Detail: fmt.Sprintf("%s is out of range for %s", n, t.Kind())})
	}
}

// intRange returns the smallest and largest value of an integer kind.
func intRange(t reflect.Type) (lo, hi *big.Int) {
	bits := uint(t.Bits())
	one := big.NewInt(1)
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		hi = new(big.Int).Sub(new(big.Int).Lsh(one, bits), one)
		return big.NewInt(0), hi
	default:
		hi = new(big.Int).Sub(new(big.Int).Lsh(one, bits-1), one)
		return new(big.Int).Neg(new(big.Int).Lsh(one, bits-1)), hi
	}
}

// fieldCache maps a struct type to its JSON field names and types.
var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// fieldsOf returns the JSON fields of a struct type, with the fields of
// embedded structs without a JSON name promoted, as encoding/json does.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := make(map[string]reflect.Type)
	collectFields(t, fields)
	fieldCache.Store(t, fields)
	return fields
}

func collectFields(t reflect.Type, into map[string]reflect.Type) {
	var embedded []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		into[name] = f.Type
	}
	// Fields at a shallower depth win over promoted ones.
	for _, et := range embedded {
		promoted := make(map[string]reflect.Type)
		collectFields(et, promoted)
		for name, ft := range promoted {
			if _, taken := into[name]; !taken {
				into[name] = ft
			}
		}
	}
}
