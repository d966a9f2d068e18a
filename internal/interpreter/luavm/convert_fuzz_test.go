package luavm

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// decodeObject decodes JSON as unstructured content: integral numbers that
// fit become int64, others float64.
func decodeObject(data []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	return numbers(m).(map[string]any), true
}

func numbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(t), 64)
		return f
	}
	return v
}

// roundTrip is what a Lua call that returns its argument unchanged does to
// an object, with the object as the reference (ReviseReplica's rules).
func roundTrip(t *testing.T, obj map[string]any) map[string]any {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	lv, err := toLua(L, obj)
	if err != nil {
		t.Fatalf("toLua: %v", err)
	}
	tbl, ok := lv.(*lua.LTable)
	if !ok {
		t.Fatalf("toLua gave %s; want a table", lv.Type())
	}
	tree, err := encodeLua(tbl, nil)
	if err != nil {
		t.Fatalf("encodeLua: %v", err)
	}
	data, err := json.Marshal(fixEmpties(tree, true, obj))
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	out, ok := decodeObject(data)
	if !ok {
		t.Fatalf("decode %s failed", data)
	}
	return out
}

// plain reports whether v has no null and no empty map or list, where the
// round trip must be the identity up to float64 rounding.
func plain(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case map[string]any:
		if len(t) == 0 {
			return false
		}
		for _, e := range t {
			if !plain(e) {
				return false
			}
		}
	case []any:
		if len(t) == 0 {
			return false
		}
		for _, e := range t {
			if !plain(e) {
				return false
			}
		}
	}
	return true
}

// viaFloat is a value after Lua: every number is a float64, and it comes
// back as int64 when json.Marshal prints it as an integer that fits.
func viaFloat(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			out[jsonString(k)] = viaFloat(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = viaFloat(e)
		}
		return out
	case string:
		return jsonString(t)
	case int64:
		return viaFloat(float64(t))
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e21 {
			b, _ := json.Marshal(t)
			if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
				return i
			}
		}
		return t
	}
	return v
}

// FuzzLuaConversion: object JSON → Lua table → Go value. It must never
// panic; the result must be stable under a second round trip; and for
// objects without nulls or empty containers it must equal the input with
// every number passed through float64 (integral values as int64).
func FuzzLuaConversion(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"X","spec":{"replicas":3,"ratio":2.5,"big":9007199254740993}}`,
		`{"a":null,"b":[1,null,2],"c":{},"d":[],"e":{"f":[{}]}}`,
		`{"labels":{},"args":[],"nested":{"x":{"y":{}}},"list":[[],{}]}`,
		`{"s":"\u00e9\ud800","n":-0,"e":1e21,"t":true}`,
		`{"m":{"k.with.dot":[],"k":{"with":{"dot":{}}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, ok := decodeObject(data)
		if !ok {
			return
		}
		original, _ := decodeObject(data)
		once := roundTrip(t, obj)
		if !reflect.DeepEqual(obj, original) {
			t.Fatalf("round trip modified its input")
		}
		twice := roundTrip(t, once)
		if !reflect.DeepEqual(once, twice) {
			t.Fatalf("round trip not stable:\n once %v\ntwice %v", once, twice)
		}
		if plain(obj) {
			if want := viaFloat(obj); !reflect.DeepEqual(once, want) {
				t.Fatalf("round trip of %s = %v; want %v", data, once, want)
			}
		}
	})
}
