package luavm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Go → Lua, as Karmada's decodeValue: slices and maps are built recursively,
// numbers become float64, and everything else goes through json.Marshal and
// gopher-json's Decode. That path is reproduced here without the JSON round
// trip for the common value types:
//   - every number becomes an LNumber (float64): int64 above 2^53 rounds;
//   - a nil map value removes the key; a nil inside a list is dropped and the
//     list compacts (Append(LNil) is a no-op in gopher-lua);
//   - {} and [] both become an empty table;
//   - strings with invalid UTF-8 get U+FFFD per bad byte, as json.Marshal does.

// toLua converts one argument.
func toLua(L *lua.LState, v any) (lua.LValue, error) {
	switch t := v.(type) {
	case nil:
		return lua.LNil, nil
	case *unstructured.Unstructured:
		if t == nil {
			return lua.LNil, nil
		}
		return jsonTreeToLua(L, t.Object)
	case []any, map[string]any:
		return jsonTreeToLua(L, t)
	case lua.LValue:
		return t, nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return lua.LNumber(rv.Int()), nil
	case rv.CanUint():
		return lua.LNumber(rv.Uint()), nil
	case rv.CanFloat():
		return lua.LNumber(rv.Float()), nil
	}
	switch rv.Kind() {
	case reflect.String:
		return lua.LString(rv.String()), nil
	case reflect.Bool:
		return lua.LBool(rv.Bool()), nil
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		if rv.IsNil() {
			return lua.LNil, nil
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("json Marshal obj %#v error: %v", v, err)
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("lua Decode obj %#v error: %v", v, err)
	}
	return jsonTreeToLua(L, tree)
}

// jsonTreeToLua converts a decoded-JSON-like tree (as in unstructured
// objects) the way json.Marshal + gopher-json Decode would.
func jsonTreeToLua(L *lua.LState, v any) (lua.LValue, error) {
	switch t := v.(type) {
	case nil:
		return lua.LNil, nil
	case map[string]any:
		tbl := L.CreateTable(0, len(t))
		for k, item := range t {
			lv, err := jsonTreeToLua(L, item)
			if err != nil {
				return nil, err
			}
			if lv != lua.LNil {
				tbl.RawSetString(jsonString(k), lv)
			}
		}
		return tbl, nil
	case []any:
		tbl := L.CreateTable(len(t), 0)
		for _, item := range t {
			lv, err := jsonTreeToLua(L, item)
			if err != nil {
				return nil, err
			}
			tbl.Append(lv)
		}
		return tbl, nil
	case string:
		return lua.LString(jsonString(t)), nil
	case bool:
		return lua.LBool(t), nil
	case int64:
		return lua.LNumber(t), nil
	case float64:
		if t != t || t > maxFloat || t < -maxFloat {
			return nil, fmt.Errorf("json Marshal obj error: json: unsupported value: %v", t)
		}
		return lua.LNumber(t), nil
	case int:
		return lua.LNumber(t), nil
	case int32:
		return lua.LNumber(t), nil
	}
	// Anything else (typed values inside an object) takes the JSON path.
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("json Marshal obj %#v error: %v", v, err)
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, fmt.Errorf("lua Decode obj %#v error: %v", v, err)
	}
	return jsonTreeToLua(L, tree)
}

const maxFloat = 1.7976931348623157e308

// jsonString returns s as it reads after a JSON round trip: each byte of an
// invalid UTF-8 sequence becomes U+FFFD.
func jsonString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		out = append(out, r) // RuneError for a bad byte, with size 1
		i += size
	}
	return string(out)
}
