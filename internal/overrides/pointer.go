package overrides

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file resolves paths inside an unstructured object in the two ways
// Karmada does: RFC 6901 JSON pointers (as go-openapi/jsonpointer does, for
// fieldOverrider) and the ad-hoc walk of the image overrider's predicate path.

// errPointer ends the errors of a JSON pointer that does not resolve, as
// go-openapi/jsonpointer's ErrPointer does in Karmada's messages.
var errPointer = errors.New("JSON pointer error")

// pointerTokens splits an RFC 6901 pointer into unescaped tokens. The empty
// pointer is the whole document.
func pointerTokens(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, errors.New(`JSON pointer must be empty or start with a "/"`)
	}
	tokens := strings.Split(p, "/")[1:]
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// escapePointerToken escapes a map key for use as one JSON pointer token.
func escapePointerToken(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// childOf returns the member token of node: a map key or a slice index.
func childOf(node any, token string) (any, error) {
	switch n := node.(type) {
	case map[string]any:
		v, ok := n[token]
		if !ok {
			return nil, fmt.Errorf("object has no key %q: %w", token, errPointer)
		}
		return v, nil
	case []any:
		i, err := sliceIndex(token, len(n))
		if err != nil {
			return nil, err
		}
		return n[i], nil
	case nil:
		return nil, fmt.Errorf("nil value has not field %q", token)
	}
	return nil, fmt.Errorf("invalid token reference %q: %w", token, errPointer)
}

// sliceIndex parses token as an index into a slice of length n.
func sliceIndex(token string, n int) (int, error) {
	i, err := strconv.Atoi(token)
	if err != nil {
		return 0, fmt.Errorf("token reference %q is not a number", token)
	}
	if i < 0 || i >= n {
		return 0, fmt.Errorf("index out of bounds array[0,%d] index '%d': %w", n-1, i, errPointer)
	}
	return i, nil
}

// getPointer returns the value at pointer p in doc.
func getPointer(doc any, p string) (any, error) {
	tokens, err := pointerTokens(p)
	if err != nil {
		return nil, err
	}
	node := doc
	for _, t := range tokens {
		if node, err = childOf(node, t); err != nil {
			return nil, err
		}
	}
	return node, nil
}

// setPointer replaces the value at pointer p in doc, in place. The parent
// must exist; a missing map key is created, a slice index must exist.
func setPointer(doc any, p string, value any) error {
	tokens, err := pointerTokens(p)
	if err != nil || len(tokens) == 0 {
		return err
	}
	parent := doc
	for _, t := range tokens[:len(tokens)-1] {
		if parent, err = childOf(parent, t); err != nil {
			return err
		}
	}
	last := tokens[len(tokens)-1]
	switch n := parent.(type) {
	case map[string]any:
		n[last] = value
		return nil
	case []any:
		i, err := sliceIndex(last, len(n))
		if err != nil {
			return err
		}
		n[i] = value
		return nil
	}
	return fmt.Errorf("invalid token reference %q: %w", last, errPointer)
}

// predicateString returns the string at an image overrider's predicate path,
// walked as Karmada's obtainImageValue walks it: segments split on "/" with
// no unescaping; a list segment consumes the next segment as its index; the
// last segment must name a string member of a map.
func predicateString(obj map[string]any, path string) (string, error) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	cur := obj
	for i := 0; i < len(segs)-1; i++ {
		switch v := cur[segs[i]].(type) {
		case map[string]any:
			cur = v
		case []any:
			idx, err := strconv.ParseInt(segs[i+1], 10, 32)
			if err != nil {
				return "", fmt.Errorf("path(%s) of rawObj's is not number", segs[i+1])
			}
			if idx < 0 || int(idx) >= len(v) {
				return "", fmt.Errorf("path(%s) index %d out of range [0,%d)", segs[i], idx, len(v))
			}
			m, ok := v[idx].(map[string]any)
			if !ok {
				return "", fmt.Errorf("path(%s/%d) of rawObj's type is not map[string]interface{}", segs[i], idx)
			}
			cur = m
			i++
		default:
			return "", fmt.Errorf("path(%s) of rawObj's type is not map[string]interface{} and []interface{}", segs[i])
		}
	}
	s, ok := cur[segs[len(segs)-1]].(string)
	if !ok {
		return "", fmt.Errorf("failed to convert path(%s) to string", segs[len(segs)-1])
	}
	return s, nil
}
