package ctl

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

func init() { commands = append(commands, newLabel, newAnnotate) }

const labelLong = `Sets or removes the labels of a member cluster, as kubectl label does for
nodes: KEY=VALUE sets, KEY- removes. Changing a label to another value needs
--overwrite. --resource-version makes the change only if the cluster was
not changed since that revision (shown by get cluster NAME -o yaml as
metadata.resourceVersion).

The hub owns a cluster's labels once it is registered: the agent's --labels
are only their initial value, and heartbeats or agent restarts never change
them. Placements whose clusterAffinity the change affects are rescheduled.

Templates and policies are labelled in their manifests (tetherctl apply).`

const annotateLong = `Sets or removes the annotations of a member cluster, as kubectl annotate
does: KEY=VALUE sets, KEY- removes. Changing an annotation to another value
needs --overwrite; --resource-version as for label.`

// metaFlags are the options of label and annotate.
type metaFlags struct {
	overwrite bool
	rev       int64
}

// metaChange is a parsed label or annotate command line.
type metaChange struct {
	cluster string
	set     map[string]string
	remove  []string
}

func newLabel(s IO) *cobra.Command {
	return newMetaCommand(s, "label", "add, change or remove the labels of a cluster", labelLong,
		(*client.Client).Label)
}

func newAnnotate(s IO) *cobra.Command {
	return newMetaCommand(s, "annotate", "add, change or remove the annotations of a cluster", annotateLong,
		(*client.Client).Annotate)
}

// newMetaCommand builds label or annotate (verb): call makes the request.
func newMetaCommand(s IO, verb, short, long string,
	call func(*client.Client, context.Context, string, client.MetaChange) (*hubv1.Cluster, error)) *cobra.Command {
	var f metaFlags
	cmd := &cobra.Command{
		Use:   verb + " cluster NAME KEY=VALUE ... KEY- ... [--overwrite] [--resource-version REV]",
		Short: short,
		Long:  long,
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := parseMetaArgs(verb, args)
			if err != nil {
				return err
			}
			ctx := contextOf(cmd)
			c, err := dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			change := client.MetaChange{Set: m.set, Remove: m.remove, Overwrite: f.overwrite, ResourceVersion: f.rev}
			if _, err := call(c, ctx, m.cluster, change); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "cluster/%s %s\n", m.cluster, map[string]string{"label": "labeled", "annotate": "annotated"}[verb])
			return nil
		},
	}
	cmd.Flags().BoolVar(&f.overwrite, "overwrite", false, "allow changing an existing key to another value")
	cmd.Flags().Int64Var(&f.rev, "resource-version", 0, "change only if the cluster is still at this revision")
	return cmd
}

// parseMetaArgs reads "cluster NAME", "clusters NAME" or "cluster/NAME",
// then KEY=VALUE and KEY- arguments. Only clusters are labelled this way.
func parseMetaArgs(verb string, args []string) (metaChange, error) {
	kind, name, slashed := strings.Cut(args[0], "/")
	rest := args[1:]
	if !slashed {
		if len(args) < 3 {
			return metaChange{}, fmt.Errorf("%s: want %s cluster NAME KEY=VALUE ... KEY- ...", verb, verb)
		}
		name, rest = args[1], args[2:]
	}
	if !isClusterKind(kind) {
		return metaChange{}, fmt.Errorf("%s %s: only clusters are changed this way; templates and policies get their labels and annotations from their manifests (tetherctl apply)", verb, kind)
	}
	m := metaChange{cluster: name, set: map[string]string{}}
	for _, a := range rest {
		if key, ok := strings.CutSuffix(a, "-"); ok && !strings.Contains(a, "=") {
			m.remove = append(m.remove, key)
			continue
		}
		key, value, ok := strings.Cut(a, "=")
		if !ok || key == "" {
			return metaChange{}, fmt.Errorf("%s %q: want KEY=VALUE to set or KEY- to remove", verb, a)
		}
		if _, dup := m.set[key]; dup {
			return metaChange{}, fmt.Errorf("%s %q: key %s given twice", verb, a, key)
		}
		m.set[key] = value
	}
	return m, nil
}
