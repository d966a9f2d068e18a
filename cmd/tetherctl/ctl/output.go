package ctl

// Output of the online commands: aligned tables, and objects as JSON or
// YAML (one object as itself, several as a Kubernetes List, like kubectl).

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"
)

// Output formats of get-like commands.
const (
	formatTable = "table"
	formatWide  = "wide"
	formatJSON  = "json"
	formatYAML  = "yaml"
)

// checkFormat refuses an -o value that is not one of allowed; printer
// formats that take an argument (printers.go) must have one after "=".
func checkFormat(format string, allowed ...string) error {
	name, arg, hasArg := strings.Cut(format, "=")
	if slices.Contains(allowed, name) && hasArg == takesArg(name) && (!hasArg || arg != "") {
		return nil
	}
	want := make([]string, 0, len(allowed))
	for _, a := range allowed {
		if takesArg(a) {
			a += "=..."
		}
		want = append(want, a)
	}
	return fmt.Errorf("unknown output format %q (want %s)", format, strings.Join(want, ", "))
}

// table writes rows under a header, columns aligned with text/tabwriter as
// kubectl does (three spaces between columns).
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.tw.Flush() }

// writeValue writes v as indented JSON or as YAML.
func writeValue(w io.Writer, format string, v any) error {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == formatJSON {
		_, err = fmt.Fprintf(w, "%s\n", js)
		return err
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}

// writeObjects writes objects (JSON documents) as JSON or YAML: one alone
// as itself when single, else wrapped in a List.
func writeObjects(w io.Writer, format string, objs []json.RawMessage, single bool) error {
	if single && len(objs) == 1 {
		return writeValue(w, format, objs[0])
	}
	items := objs
	if items == nil {
		items = []json.RawMessage{}
	}
	return writeValue(w, format, map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}

// age renders the time since t as kubectl does: 45s, 12m, 5h, 3d; "<unknown>"
// for a zero time.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return shortDuration(now.Sub(t))
}

// shortDuration renders d in its largest whole unit (s, m, h, d).
func shortDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// labelString renders labels as k=v pairs sorted by key, "<none>" for none.
func labelString(l map[string]string) string {
	if len(l) == 0 {
		return "<none>"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, ",")
}

// orNone is s, or "<none>" when empty.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
