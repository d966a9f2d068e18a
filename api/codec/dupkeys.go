package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// checkDuplicateKeys reports the first object of a JSON value that names a
// key twice, as a syntax error wrapping a FieldError with its path. The
// value is known to be well-formed (json.Decoder read it) and within the
// depth limit only later, so the walk keeps its own stack rather than
// recursing.
func checkDuplicateKeys(js []byte) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	// frame is one open object or array.
	type frame struct {
		path   *field.Path
		keys   map[string]bool // nil for an array
		next   int             // the index of an array's next element
		keyNow bool            // an object expects a key next
	}
	var stack []*frame
	var pending *field.Path // the path of the value about to be read
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil // not ours to report: the decoder that read it said it is valid
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.keys != nil && top.keyNow {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key, _ := tok.(string)
			p := child(top.path, key)
			if top.keys[key] {
				return fmt.Errorf("%w: %w", ErrSyntax, &FieldError{Type: ErrorTypeDuplicate, Path: p.String()})
			}
			top.keys[key] = true
			top.keyNow, pending = false, p
			continue
		}
		if top != nil && top.keys == nil {
			if d, ok := tok.(json.Delim); ok && d == ']' {
				stack = stack[:len(stack)-1]
				continue
			}
			pending = index(top.path, top.next)
			top.next++
		}
		if top != nil && top.keys != nil {
			top.keyNow = true // this token is the value; a key comes next
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{path: pending, keys: map[string]bool{}, keyNow: true})
		case json.Delim('['):
			stack = append(stack, &frame{path: pending})
		}
	}
}
