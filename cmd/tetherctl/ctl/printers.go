package ctl

// kubectl's object printers beyond JSON and YAML: -o name (kind.group/name),
// -o jsonpath=TEMPLATE (or jsonpath-file=FILE), run over one object or, for
// several, over a List of them as kubectl does, and -o
// custom-columns=HEADER:PATH,... with a row per object.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// Printer formats; on the command line they take an argument after "=",
// except name.
const (
	formatName          = "name"
	formatJSONPath      = "jsonpath"
	formatJSONPathFile  = "jsonpath-file"
	formatCustomColumns = "custom-columns"
)

// printerFormats are the formats writeObjectsAs prints.
var printerFormats = []string{formatName, formatJSONPath, formatJSONPathFile, formatCustomColumns}

// takesArg reports whether format is written format=ARG.
func takesArg(format string) bool {
	return format == formatJSONPath || format == formatJSONPathFile || format == formatCustomColumns
}

// isPrinterFormat reports whether the -o value is one of printerFormats.
func isPrinterFormat(output string) bool {
	name, _, _ := strings.Cut(output, "=")
	for _, f := range printerFormats {
		if f == name {
			return true
		}
	}
	return false
}

// writeObjectsAs prints objects (JSON documents) in a printer format; single
// runs a jsonpath over the one object rather than a List.
func writeObjectsAs(w io.Writer, output string, objs []json.RawMessage, single bool) error {
	values := make([]any, 0, len(objs))
	for _, o := range objs {
		v, err := decodeJSON(o)
		if err != nil {
			return err
		}
		values = append(values, v)
	}
	format, arg, _ := strings.Cut(output, "=")
	switch format {
	case formatName:
		for _, v := range values {
			fmt.Fprintln(w, kindGroupName(v))
		}
		return nil
	case formatCustomColumns:
		return writeColumns(w, arg, values)
	}
	var data any = map[string]any{"apiVersion": "v1", "kind": "List", "items": values}
	if single && len(values) == 1 {
		data = values[0]
	}
	return writeJSONPath(w, format, arg, data)
}

// writeValueAs prints one value (not a Kubernetes object) with -o
// jsonpath or jsonpath-file.
func writeValueAs(w io.Writer, output string, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	data, err := decodeJSON(js)
	if err != nil {
		return err
	}
	format, arg, _ := strings.Cut(output, "=")
	return writeJSONPath(w, format, arg, data)
}

// writeJSONPath runs the template (or the template file's) over data.
// Missing keys print nothing, as kubectl's default
// --allow-missing-template-keys does.
func writeJSONPath(w io.Writer, format, arg string, data any) error {
	tmpl := arg
	if format == formatJSONPathFile {
		b, err := os.ReadFile(arg)
		if err != nil {
			return fmt.Errorf("read jsonpath file: %w", err)
		}
		tmpl = string(b)
	}
	j := jsonpath.New("output").AllowMissingKeys(true)
	if err := j.Parse(tmpl); err != nil {
		return fmt.Errorf("parse jsonpath %q: %w", tmpl, err)
	}
	return j.Execute(w, data)
}

// decodeJSON decodes a document keeping numbers as written (3, not 3e+00).
func decodeJSON(js []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return v, nil
}

// kindGroupName is kubectl's -o name: kind.group/name, lower case, kind/name
// for the core group.
func kindGroupName(v any) string {
	m, _ := v.(map[string]any)
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	meta, _ := m["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	res := strings.ToLower(kind)
	if group, _, ok := strings.Cut(apiVersion, "/"); ok {
		res += "." + group
	}
	return res + "/" + name
}

// column is one custom column: its header and the path it shows.
type column struct {
	header string
	path   *jsonpath.JSONPath
}

// relaxedPath matches kubectl's relaxed column paths: .a.b, a.b or {.a.b}.
var relaxedPath = regexp.MustCompile(`^\{?(\.?[^{}]*)\}?$`)

// parseColumns reads HEADER:PATH,HEADER:PATH.
func parseColumns(spec string) ([]column, error) {
	var cols []column
	for _, part := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(part, ":")
		m := relaxedPath.FindStringSubmatch(strings.TrimSpace(path))
		if !ok || header == "" || m == nil || m[1] == "" {
			return nil, fmt.Errorf("custom-columns %q: want HEADER:PATH[,HEADER:PATH...], e.g. NAME:.metadata.name", part)
		}
		expr := m[1]
		if !strings.HasPrefix(expr, ".") {
			expr = "." + expr
		}
		j := jsonpath.New(header).AllowMissingKeys(true)
		if err := j.Parse("{" + expr + "}"); err != nil {
			return nil, fmt.Errorf("custom-columns %s: %w", header, err)
		}
		cols = append(cols, column{header: header, path: j})
	}
	return cols, nil
}

// writeColumns writes a table with a row per value; a path with no value
// shows <none>, several values are joined with commas.
func writeColumns(w io.Writer, spec string, values []any) error {
	cols, err := parseColumns(spec)
	if err != nil {
		return err
	}
	headers := make([]string, 0, len(cols))
	for _, c := range cols {
		headers = append(headers, c.header)
	}
	t := newTable(w, headers...)
	for _, v := range values {
		row := make([]string, 0, len(cols))
		for _, c := range cols {
			row = append(row, cell(c.path, v))
		}
		t.row(row...)
	}
	return t.flush()
}

// cell renders what path finds in v.
func cell(path *jsonpath.JSONPath, v any) string {
	results, err := path.FindResults(v)
	if err != nil {
		return "<none>"
	}
	var parts []string
	for _, rs := range results {
		for _, r := range rs {
			parts = append(parts, textOf(r))
		}
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, ",")
}

// textOf renders a found value: scalars as themselves, maps and lists as
// JSON.
func textOf(r reflect.Value) string {
	if r.Kind() == reflect.Interface || r.Kind() == reflect.Pointer {
		r = r.Elem()
	}
	if !r.IsValid() {
		return "<none>"
	}
	switch r.Kind() {
	case reflect.Map, reflect.Slice:
		js, err := json.Marshal(r.Interface())
		if err != nil {
			return fmt.Sprint(r.Interface())
		}
		return string(js)
	}
	return fmt.Sprint(r.Interface())
}
