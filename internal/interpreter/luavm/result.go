package luavm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua → Go, as Karmada's ConvertLuaResultInto:
//  1. gopher-json's Encode turns the table into JSON (encodeTable below
//     builds the same value tree and fails with the same messages);
//  2. empty tables, which encode as [], are turned back into {} or deleted
//     depending on the reference objects (fixEmpties);
//  3. the JSON is unmarshalled into the target with encoding/json.

// gopher-json's errors.
var (
	errNested      = errors.New("cannot encode recursively nested tables to JSON")
	errSparseArray = errors.New("cannot encode sparse array")
	errInvalidKeys = errors.New("cannot encode mixed or invalid key types")
)

// marshalerPrefix is how encoding/json wraps an error returned by a
// MarshalJSON method; gopher-json's values nest, so an error raised at depth
// d (the root table is 0) is wrapped d+1 times.
const marshalerPrefix = "json: error calling MarshalJSON for type json.jsonValue: "

type encodeError struct {
	err   error
	depth int
}

func (e *encodeError) Error() string {
	return strings.Repeat(marshalerPrefix, e.depth+1) + e.err.Error()
}

// encoder mirrors gopher-json's Encode. visited is never cleared, so a table
// reached twice — even without a cycle — is refused as "nested", as there.
//
// A result can be as large as the call's memory budget allowed the script
// to build, and its JSON larger still: one string referenced from many
// places is encoded each time. So meter, when set, is charged one
// instruction per value every matchStepChunk values (the conversion stops
// with the budget's error like the script would), and jsonBytes bounds the
// JSON the tree encodes to, which convertResult reserves before encoding.
type encoder struct {
	visited map[*lua.LTable]bool
	meter   meterFunc
	values  int
	// jsonBytes bounds the encoded size: jsonEscape bytes per string byte
	// (keys included) and jsonValueBytes per value.
	jsonBytes int
}

// JSON size bounds: encoding/json writes a string byte as at most 6 bytes
// ("\u003c" for "<"), and a number, literal or the punctuation around a
// value in at most 32.
const (
	jsonEscape     = 6
	jsonValueBytes = 32
)

// errMetered wraps a budget error that stopped a conversion.
type errMetered struct{ err error }

func (e *errMetered) Error() string { return e.err.Error() }
func (e *errMetered) Unwrap() error { return e.err }

// encodeLua converts a Lua value to a JSON tree: map[string]any, []any,
// float64, string, bool or nil. An empty table is an empty []any.
func encodeLua(v lua.LValue, meter meterFunc) (any, error) {
	tree, _, err := encodeSized(v, meter)
	return tree, err
}

// encodeSized is encodeLua that also returns the bound of the tree's JSON
// size.
func encodeSized(v lua.LValue, meter meterFunc) (any, int, error) {
	e := encoder{visited: make(map[*lua.LTable]bool), meter: meter}
	tree, err := e.value(v, 0)
	return tree, e.jsonBytes, err
}

func (e *encoder) value(v lua.LValue, depth int) (any, error) {
	if e.values++; e.meter != nil && e.values%matchStepChunk == 0 {
		if err := e.meter(matchStepChunk); err != nil {
			return nil, &errMetered{err}
		}
	}
	e.jsonBytes += jsonValueBytes
	if str, ok := v.(lua.LString); ok {
		e.jsonBytes += jsonEscape * len(str)
	}
	switch t := v.(type) {
	case lua.LBool:
		return bool(t), nil
	case lua.LNumber:
		f := float64(t)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, &encodeError{err: fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64)), depth: depth}
		}
		return f, nil
	case *lua.LNilType:
		return nil, nil
	case lua.LString:
		return string(t), nil
	case *lua.LTable:
		return e.table(t, depth)
	default:
		return nil, &encodeError{err: fmt.Errorf("cannot encode %s to JSON", v.Type().String()), depth: depth}
	}
}

func (e *encoder) table(t *lua.LTable, depth int) (any, error) {
	if e.visited[t] {
		return nil, &encodeError{err: errNested, depth: depth}
	}
	e.visited[t] = true
	key, val := t.Next(lua.LNil)
	switch key.Type() {
	case lua.LTNil:
		return []any{}, nil
	case lua.LTNumber:
		var vals []lua.LValue
		expected := lua.LNumber(1)
		for key != lua.LNil {
			if key.Type() != lua.LTNumber {
				return nil, &encodeError{err: errInvalidKeys, depth: depth}
			}
			if key != expected {
				return nil, &encodeError{err: errSparseArray, depth: depth}
			}
			vals = append(vals, val)
			expected++
			key, val = t.Next(key)
		}
		arr := make([]any, len(vals))
		for i, item := range vals {
			v, err := e.value(item, depth+1)
			if err != nil {
				return nil, err
			}
			arr[i] = v
		}
		return arr, nil
	case lua.LTString:
		raw := make(map[string]lua.LValue)
		for key != lua.LNil {
			if key.Type() != lua.LTString {
				return nil, &encodeError{err: errInvalidKeys, depth: depth}
			}
			raw[key.String()] = val
			e.jsonBytes += jsonEscape * len(key.String())
			key, val = t.Next(key)
		}
		// encoding/json marshals map keys in sorted order, so children are
		// visited in that order.
		keys := make([]string, 0, len(raw))
		for k := range raw {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		obj := make(map[string]any, len(raw))
		for _, k := range keys {
			v, err := e.value(raw[k], depth+1)
			if err != nil {
				return nil, err
			}
			obj[k] = v
		}
		return obj, nil
	default:
		return nil, &encodeError{err: errInvalidKeys, depth: depth}
	}
}

// fixEmpties is Karmada's convertEmptySliceToEmptyStructPartly on a tree. A
// root empty table becomes {} for struct targets. Otherwise every empty list
// in the result is looked up, by its path without list indexes, among the
// empty values of the references: found as {} it becomes {}, found as [] it
// stays, found nowhere it is deleted (list elements are removed and the list
// shrinks). Karmada applies the deletions in random order, which only matters
// for several deletions in one list; they are applied back to front here,
// which removes exactly the marked elements.
func fixEmpties(tree any, isStruct bool, references ...any) any {
	if arr, ok := tree.([]any); ok && len(arr) == 0 {
		if isStruct {
			return map[string]any{}
		}
		return tree
	}
	if !hasEmptyList(tree) {
		// Nothing to fix: the references need not be walked.
		return tree
	}
	emptySlices, emptyStructs := map[string]bool{}, map[string]bool{}
	for _, ref := range references {
		collectEmpties(refTree(ref), "", emptySlices, emptyStructs)
	}
	out, _ := fixNode(tree, "", false, emptySlices, emptyStructs)
	return out
}

// hasEmptyList reports whether the tree holds an empty list anywhere.
func hasEmptyList(n any) bool {
	switch t := n.(type) {
	case []any:
		if len(t) == 0 {
			return true
		}
		for _, item := range t {
			if hasEmptyList(item) {
				return true
			}
		}
	case map[string]any:
		for _, item := range t {
			if hasEmptyList(item) {
				return true
			}
		}
	}
	return false
}

// fixNode returns the fixed node and whether it must be deleted. inList says
// whether n is a list element (its path then has no key of its own).
func fixNode(n any, path string, _ bool, slices, structs map[string]bool) (any, bool) {
	switch t := n.(type) {
	case []any:
		if len(t) == 0 {
			if structs[path] {
				return map[string]any{}, false
			}
			return t, !slices[path]
		}
		out := t[:0:0]
		for _, item := range t {
			fixed, del := fixNode(item, path, true, slices, structs)
			if !del {
				out = append(out, fixed)
			}
		}
		return out, false
	case map[string]any:
		for k, item := range t {
			fixed, del := fixNode(item, joinPath(path, k), false, slices, structs)
			if del {
				delete(t, k)
			} else {
				t[k] = fixed
			}
		}
		return t, false
	}
	return n, false
}

func collectEmpties(n any, path string, slices, structs map[string]bool) {
	switch t := n.(type) {
	case []any:
		for _, item := range t {
			visitEmpty(item, path, slices, structs)
		}
	case map[string]any:
		for k, item := range t {
			visitEmpty(item, joinPath(path, k), slices, structs)
		}
	}
}

func visitEmpty(item any, path string, slices, structs map[string]bool) {
	switch t := item.(type) {
	case []any:
		if len(t) == 0 {
			slices[path] = true
			return
		}
	case map[string]any:
		if len(t) == 0 {
			structs[path] = true
			return
		}
	default:
		return
	}
	collectEmpties(item, path, slices, structs)
}

// joinPath joins keys with "." after escaping "\" and "." in the key, so a
// key containing a dot never collides with a nested path.
func joinPath(path, key string) string {
	if strings.ContainsAny(key, `.\`) {
		key = strings.NewReplacer(`\`, `\\`, `.`, `\.`).Replace(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// refTree returns a reference object as a JSON tree.
func refTree(ref any) any {
	switch t := ref.(type) {
	case nil:
		return nil
	case map[string]any:
		return t
	case interface{ UnstructuredContent() map[string]any }:
		if reflect.ValueOf(t).IsNil() {
			return nil
		}
		return t.UnstructuredContent()
	}
	data, err := json.Marshal(ref)
	if err != nil {
		return nil
	}
	var tree any
	_ = json.Unmarshal(data, &tree)
	return tree
}

// convert is convertResult under the call's budget.
func (c *call) convert(v lua.LValue, target any, references ...any) error {
	return convertResult(c.budget, v, target, references...)
}

// convertResult converts a Lua table into target (a pointer), Karmada's
// ConvertLuaResultInto with the given references. Under a budget b (nil:
// none) the conversion is charged as instructions, and twice the bound of
// the JSON's size (the encoding and its decoding into target) is reserved
// before encoding.
func convertResult(b *budget, v lua.LValue, target any, references ...any) error {
	var meter meterFunc
	if b != nil {
		meter = b.charge
	}
	tree, size, err := encodeSized(v, meter)
	var metered *errMetered
	if errors.As(err, &metered) {
		return fmt.Errorf("convert lua result: %w", metered.err)
	}
	if err != nil {
		return fmt.Errorf("encode lua result to json failed: %+v", err)
	}
	if b != nil && size >= smallResultBytes {
		if err := b.reserve("the result's JSON", 2*int64(size)); err != nil {
			return fmt.Errorf("convert lua result: %w", err)
		}
	}
	isStruct := reflect.TypeOf(target).Elem().Kind() == reflect.Struct
	tree = fixEmpties(tree, isStruct, references...)
	data, err := json.Marshal(tree)
	if err != nil {
		return fmt.Errorf("encode lua result to json failed: %+v", err)
	}
	if err := json.Unmarshal(data, target); err != nil {
		return fmt.Errorf("json unmarshal obj failed: %+v", err)
	}
	return nil
}
