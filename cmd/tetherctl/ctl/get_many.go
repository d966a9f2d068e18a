package ctl

// `get KIND,KIND [NAME]`: several kinds at once, as kubectl does. Tables
// come one per kind, rows named kind.group/name; JSON, YAML and the other
// printers get one List of every object.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

// resourceName is the kind's lower-case name with its group, as kubectl
// prefixes rows and -o name: deployment.apps, configmap.
func (k kindSpec) resourceName() string {
	res := strings.ToLower(k.kind)
	if group, _, ok := strings.Cut(k.apiVersion, "/"); ok {
		res += "." + group
	}
	return res
}

func runGetMany(ctx context.Context, s IO, kindNames, names []string, f getFlags) error {
	if f.watch {
		return fmt.Errorf("get %s --watch: watch one kind at a time", strings.Join(kindNames, ","))
	}
	var kinds []kindSpec
	for _, n := range kindNames {
		if isClusterKind(n) {
			return fmt.Errorf("get %s: clusters cannot be listed with other kinds; run tetherctl get clusters", strings.Join(kindNames, ","))
		}
		k, err := resolveKind(ctx, n)
		if err != nil {
			return err
		}
		kinds = append(kinds, k)
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	byKind := make([][]*hubv1.Object, len(kinds))
	for i, k := range kinds {
		if byKind[i], err = fetchObjects(ctx, c, k, names, f); err != nil {
			return fmt.Errorf("get %s: %w", k.plural, err)
		}
	}
	if f.output == formatJSON || f.output == formatYAML || isPrinterFormat(f.output) {
		var raw []json.RawMessage
		for _, objs := range byKind {
			for _, o := range objs {
				raw = append(raw, o.GetObjectJson())
			}
		}
		if isPrinterFormat(f.output) {
			return writeObjectsAs(s.Out, f.output, raw, false)
		}
		return writeObjects(s.Out, f.output, raw, false)
	}
	return printKinds(ctx, s, c, kinds, byKind, f)
}

// printKinds writes a table per kind that has objects, a blank line
// between them.
func printKinds(ctx context.Context, s IO, c *client.Client, kinds []kindSpec, byKind [][]*hubv1.Object, f getFlags) error {
	f.kindPrefix = true
	printed := false
	for i, k := range kinds {
		if len(byKind[i]) == 0 {
			continue
		}
		if printed {
			fmt.Fprintln(s.Out)
		}
		if err := printObjects(ctx, s, k, byKind[i], f, placesFor(c, k, f)); err != nil {
			return err
		}
		printed = true
	}
	if !printed {
		where := " in namespace " + f.ns()
		if f.allNamespaces {
			where = ""
		}
		fmt.Fprintf(s.Err, "No resources found%s.\n", where)
	}
	return nil
}
