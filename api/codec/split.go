package codec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Limits on hostile input. Both can be changed per call with options.
const (
	// DefaultMaxBytes is the largest input accepted, in bytes, and the
	// largest a YAML document may grow to once converted to JSON (aliases
	// expand). It matches the Kubernetes API server's request limit.
	DefaultMaxBytes = 3 << 20
	// DefaultMaxDepth is the deepest nesting of objects and arrays accepted.
	// Policies nest about 10 deep; plaintext values carry whole pod specs.
	DefaultMaxDepth = 100
	// MaxDocuments is the most documents one input may hold.
	MaxDocuments = 10000
	// maxAliasNodes bounds the YAML nodes that anchors and aliases may add
	// to a document once expanded ("billion laughs").
	maxAliasNodes = 10000
)

// Document is one document of an input, converted to JSON.
type Document struct {
	// Index is the document's position in the input, from 1 (documents
	// that are empty or only comments are skipped, not counted).
	Index int
	// JSON is the document as JSON.
	JSON []byte
	// APIVersion and Kind are the document's, empty if it has none or they
	// are not strings.
	APIVersion, Kind string
}

// Known reports whether the document is one of Tether's objects (see Known).
func (d *Document) Known() bool { return Known(d.APIVersion, d.Kind) }

// Split splits YAML (documents separated by "---" lines) or JSON (one or
// more concatenated values) into documents, enforcing the size, depth,
// alias and UTF-8 limits, without decoding them into types. Use it to route
// a mixed input: Known documents go to DecodeDocument, the others are
// resource templates.
func Split(data []byte, opts ...Option) ([]Document, error) {
	o := newOptions(opts)
	if len(data) > o.maxBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(data), o.maxBytes)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: input is not valid UTF-8 (at byte %d)", ErrSyntax, firstInvalidUTF8(data))
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var raws [][]byte
	var err error
	if looksLikeJSON(data) {
		raws, err = splitJSON(data, o)
	} else {
		raws, err = splitYAML(data, o)
	}
	if err != nil {
		return nil, err
	}
	docs := make([]Document, 0, len(raws))
	for i, raw := range raws {
		if err := checkDepth(raw, o.maxDepth); err != nil {
			return nil, &DocumentError{Index: i + 1, Errs: []error{err}}
		}
		doc := Document{Index: i + 1, JSON: raw}
		doc.APIVersion, doc.Kind = peekTypeMeta(raw)
		docs = append(docs, doc)
	}
	return docs, nil
}

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

func looksLikeJSON(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

// splitJSON reads concatenated JSON values. Like YAML's (strict
// conversion), a JSON object may not name a key twice: encoding/json would
// silently keep the last, so what is stored would differ from what a
// reviewer of the input reads.
func splitJSON(data []byte, o *options) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out [][]byte
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			// encoding/json stops at 10,000 levels with "exceeded max
			// depth"; name our own, lower limit instead.
			if derr := checkDepth(data, o.maxDepth); derr != nil {
				return nil, &DocumentError{Index: len(out) + 1, Errs: []error{derr}}
			}
			return nil, fmt.Errorf("%w: document %d: %v", ErrSyntax, len(out)+1, err)
		}
		if len(out) == MaxDocuments {
			return nil, tooManyDocuments()
		}
		if err := checkDuplicateKeys(raw); err != nil {
			return nil, &DocumentError{Index: len(out) + 1, Errs: []error{err}}
		}
		out = append(out, raw)
	}
}

// splitYAML splits a YAML stream and converts each document to JSON with
// the same YAML 1.1 rules as Kubernetes and Karmada (sigs.k8s.io/yaml);
// duplicate keys are errors. Empty documents are dropped.
func splitYAML(data []byte, o *options) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out [][]byte
	for {
		chunk, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		n := len(out) + 1 // the index this document gets if it is not empty
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %v", ErrSyntax, n, err)
		}
		js, err := yamlToJSON(chunk, o)
		if err != nil {
			return nil, &DocumentError{Index: n, Errs: []error{err}}
		}
		if bytes.Equal(js, []byte("null")) {
			continue
		}
		if len(out) == MaxDocuments {
			return nil, tooManyDocuments()
		}
		out = append(out, js)
	}
}

func tooManyDocuments() error {
	return fmt.Errorf("%w: more than %d documents", ErrTooLarge, MaxDocuments)
}

func yamlToJSON(chunk []byte, o *options) ([]byte, error) {
	if err := checkAliases(chunk); err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSONStrict(chunk)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if len(js) > o.maxBytes {
		return nil, fmt.Errorf("%w: document expands to %d bytes of JSON, the limit is %d",
			ErrTooLarge, len(js), o.maxBytes)
	}
	return js, nil
}

// checkDepth reports JSON that nests objects and arrays deeper than max.
func checkDepth(js []byte, max int) error {
	depth, inString, escaped := 0, false, false
	for _, c := range js {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return fmt.Errorf("%w: more than %d levels of nesting", ErrTooDeep, max)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// peekTypeMeta returns the apiVersion and kind of a JSON document, empty
// where they are missing or not strings.
func peekTypeMeta(js []byte) (apiVersion, kind string) {
	var tm struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if err := json.Unmarshal(js, &tm); err != nil {
		return "", ""
	}
	apiVersion, _ = tm.APIVersion.(string)
	kind, _ = tm.Kind.(string)
	return apiVersion, kind
}
