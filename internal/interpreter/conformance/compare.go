package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Options change how Compare judges errors.
type Options struct {
	// LenientErrors accepts any error containing the case's errorContains,
	// whatever its errorCompare (check.py --lenient-errors).
	LenientErrors bool
}

// CheckEnabled compares the interpreter's HookEnabled (native) or "has a
// script" (lua) answer with the case's expected "enabled".
func (c Case) CheckEnabled(enabled bool) error {
	for _, exp := range c.candidates() {
		if exp.Enabled == enabled {
			return nil
		}
	}
	return fmt.Errorf("enabled: expected %t, got %t", c.Expected.Enabled, enabled)
}

// Compare applies the suite's comparison rules (README "Comparing", steps
// 1-3 and 5-9) to one run: got are the results (ignored when gotErr is not
// nil), gotErr the error. Step 4 (enabled) is CheckEnabled. It returns nil
// when the run matches the expected output or any expected alternative, and
// for cases SkipReason says cannot run here.
func Compare(c Case, got Results, gotErr error) error {
	return CompareWith(c, got, gotErr, Options{})
}

// CompareWith is Compare with options.
func CompareWith(c Case, got Results, gotErr error, opts Options) error {
	if c.SkipReason() != "" {
		return nil
	}
	var gotN normalised
	if gotErr == nil {
		var err error
		if gotN, err = normalise(c, got, floatPaths(got)); err != nil {
			return fmt.Errorf("results: %w", err)
		}
	}
	var reasons []string
	for _, exp := range c.candidates() {
		reason := c.compareOne(exp, gotN, gotErr, opts)
		if reason == "" {
			return nil
		}
		reasons = append(reasons, reason)
	}
	return errors.New(strings.Join(reasons, "\n"))
}

func (c Case) candidates() []Expected {
	return append([]Expected{c.Expected}, c.Alternatives...)
}

// compareOne returns "" when got matches exp, else the first difference.
func (c Case) compareOne(exp Expected, got normalised, gotErr error, opts Options) string {
	if reason := c.compareError(exp.Error, gotErr, opts); reason != "" {
		return reason
	}
	if exp.Error != nil {
		return ""
	}
	want, err := normalise(c, exp.Results, exp.FloatPaths)
	if err != nil {
		return fmt.Sprintf("expected results: %v", err)
	}
	if !equalResults(want.results, got.results, c.SetKeys) {
		return fmt.Sprintf("results differ:\n  expected %s\n  got      %s", canonical(want.results), canonical(got.results))
	}
	if !equalFloatPaths(want.floatPaths, got.floatPaths) {
		return fmt.Sprintf("floatPaths: expected %v, got %v", want.floatPaths, got.floatPaths)
	}
	return ""
}

// compareError implements step 5: both nil, or both set and matching.
func (c Case) compareError(want *string, got error, opts Options) string {
	switch {
	case want == nil && got == nil:
		return ""
	case want == nil:
		return fmt.Sprintf("error: expected none, got %q", got.Error())
	case got == nil:
		return fmt.Sprintf("error: expected %q, got none", *want)
	}
	if c.ErrorCompare == ErrorExact && !opts.LenientErrors {
		if got.Error() != *want {
			return fmt.Sprintf("error: expected %q, got %q", *want, got.Error())
		}
		return ""
	}
	needle := c.ErrorContains
	if needle == "" {
		needle = *want
	}
	if !strings.Contains(got.Error(), needle) {
		return fmt.Sprintf("error: expected one containing %q, got %q", needle, got.Error())
	}
	return ""
}

// normalised is one side of a comparison: results after a JSON round trip
// with ignorePaths applied, and the float paths left after ignorePaths.
type normalised struct {
	results    map[string]any
	floatPaths map[string][]string
}

func normalise(c Case, r Results, fp map[string][]string) (normalised, error) {
	var n normalised
	if len(r) > 0 {
		v, err := jsonValue(map[string]any(r))
		if err != nil {
			return n, err
		}
		n.results = v.(map[string]any)
	}
	for key, paths := range c.IgnorePaths {
		for _, p := range paths {
			if _, ok := n.results[key]; ok {
				n.results = deletePath(n.results, append([]string{key}, strings.Split(p, ".")...)).(map[string]any)
			}
		}
	}
	n.floatPaths = map[string][]string{}
	for key, paths := range fp {
		var kept []string
		for _, p := range paths {
			if !ignored(p, c.IgnorePaths[key]) {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			sort.Strings(kept)
			n.floatPaths[key] = kept
		}
	}
	return n, nil
}

// deletePath deletes a dotted path and returns the updated value; "*"
// matches every key or element and a number selects a list element.
func deletePath(v any, parts []string) any {
	if len(parts) == 0 || v == nil {
		return v
	}
	head, rest := parts[0], parts[1:]
	switch v := v.(type) {
	case map[string]any:
		for _, k := range matchingKeys(v, head) {
			if len(rest) == 0 {
				delete(v, k)
			} else {
				v[k] = deletePath(v[k], rest)
			}
		}
	case []any:
		return deleteListPath(v, head, rest)
	}
	return v
}

func matchingKeys(m map[string]any, head string) []string {
	if head != "*" {
		if _, ok := m[head]; ok {
			return []string{head}
		}
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// deleteListPath applies the rest of the path to the selected elements, or
// removes them when the path ends here.
func deleteListPath(l []any, head string, rest []string) []any {
	selected := func(i int) bool { return head == "*" || head == strconv.Itoa(i) }
	out := l[:0:0]
	for i, e := range l {
		switch {
		case !selected(i):
			out = append(out, e)
		case len(rest) > 0:
			out = append(out, deletePath(e, rest))
		}
	}
	return out
}

// ignored reports whether a float path ("a.b[0].c") lies under one of the
// ignore patterns ("a.b.0.c", "a.b.*.c").
func ignored(path string, patterns []string) bool {
	p := strings.Split(strings.NewReplacer("[", ".", "]", "").Replace(path), ".")
	for _, pattern := range patterns {
		q := strings.Split(pattern, ".")
		if len(q) > len(p) {
			continue
		}
		match := true
		for i := range q {
			if q[i] != "*" && q[i] != p[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func equalFloatPaths(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, pa := range a {
		if !slices.Equal(pa, b[k]) {
			return false
		}
	}
	return true
}

func canonical(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(raw)
}

// equalResults compares two result maps; keys in setKeys holding lists are
// compared as multisets.
func equalResults(a, b map[string]any, setKeys []string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			return false
		}
		la, okA := va.([]any)
		lb, okB := vb.([]any)
		if slices.Contains(setKeys, k) && okA && okB {
			if !equalMultiset(la, lb) {
				return false
			}
		} else if !equalJSON(va, vb) {
			return false
		}
	}
	return true
}

func equalMultiset(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
	for _, ea := range a {
		found := false
		for j, eb := range b {
			if !used[j] && equalJSON(ea, eb) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// equalJSON is JSON semantic equality of two decoded values: key order is
// irrelevant, list order matters, numbers compare by exact decimal value.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, ea := range a {
			eb, ok := bm[k]
			if !ok || !equalJSON(ea, eb) {
				return false
			}
		}
		return true
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], bl[i]) {
				return false
			}
		}
		return true
	case json.Number:
		bn, ok := b.(json.Number)
		return ok && equalNumber(a, bn)
	default:
		return a == b
	}
}

// equalNumber compares two JSON number literals by exact decimal value, so
// 3 = 3.0 and -0 = 0 but 9007199254740992 != 9007199254740993.
func equalNumber(a, b json.Number) bool {
	ra, okA := new(big.Rat).SetString(string(a))
	rb, okB := new(big.Rat).SetString(string(b))
	if !okA || !okB {
		return a == b
	}
	return ra.Cmp(rb) == 0
}

// floatPaths lists, per object result key, the paths of float64 values.
func floatPaths(r Results) map[string][]string {
	fp := map[string][]string{}
	for _, key := range objectKeys {
		var paths []string
		collectFloats(r[key], "", &paths)
		if len(paths) > 0 {
			fp[key] = paths
		}
	}
	return fp
}

func collectFloats(v any, path string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			collectFloats(e, p, out)
		}
	case []any:
		for i, e := range v {
			collectFloats(e, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case float64, float32:
		*out = append(*out, path)
	}
}
