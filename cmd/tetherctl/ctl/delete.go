package ctl

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
	"github.com/tetherproj/tether/client"
)

func init() { commands = append(commands, newDelete) }

const deleteLong = `Deletes objects from the hub: "delete KIND NAME" or the objects of a file
("delete -f FILE|DIR|-", -f repeatable). Deleting a template removes it from the member
clusters it was propagated to.

With -f, the hub reads the objects as apply would (without storing
anything) to find their names and namespaces, and each is deleted in turn;
objects that do not exist are reported and the others still deleted.`

func newDelete(s IO) *cobra.Command {
	var (
		files     []string
		namespace string
	)
	cmd := &cobra.Command{
		Use:   "delete (KIND NAME | -f FILE|DIR|-) [-n NS]",
		Short: "delete objects from the hub",
		Long:  deleteLong,
		Args:  cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := contextOf(cmd)
			switch {
			case len(files) > 0 && len(args) > 0:
				return fmt.Errorf("give either KIND NAME or -f FILE, not both")
			case len(files) > 0:
				return deleteFile(ctx, s, files, namespace)
			case len(args) != 2:
				return fmt.Errorf("want KIND NAME (e.g. delete deployment web) or -f FILE")
			}
			k, err := resolveKind(ctx, args[0])
			if err != nil {
				return err
			}
			ns := namespace
			if ns == "" {
				ns = "default"
			}
			return deleteRefs(ctx, s, []*hubv1.ObjectRef{k.ref(ns, args[1])})
		},
	}
	addFilenameFlag(cmd, &files, `file, directory or "-" whose objects to delete; repeat for more`)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", `namespace (default "default")`)
	return cmd
}

// deleteFile deletes the objects of a manifest file; the hub resolves
// their namespaces and scopes through a dry-run apply.
func deleteFile(ctx context.Context, s IO, files []string, namespace string) error {
	manifests, err := readManifests(files, s.In)
	if err != nil {
		return err
	}
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := c.ApplyWith(ctx, client.ApplyOptions{DryRun: true, DefaultNamespace: namespace}, manifests)
	if resp == nil {
		return err
	}
	// A dry run that rejects some objects still answers for each: every
	// result with a resolved ref is deleted, as before the typed client.
	var refs []*hubv1.ObjectRef
	for _, r := range resp.GetResults() {
		if r.GetRef().GetName() != "" {
			refs = append(refs, r.GetRef())
		}
	}
	return deleteWith(ctx, s, c, refs)
}

func deleteRefs(ctx context.Context, s IO, refs []*hubv1.ObjectRef) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return deleteWith(ctx, s, c, refs)
}

// deleteWith deletes each ref, going on past objects that are not found;
// any failure fails the command.
func deleteWith(ctx context.Context, s IO, c *client.Client, refs []*hubv1.ObjectRef) error {
	var last error
	failed := 0
	for _, ref := range refs {
		name := strings.ToLower(ref.GetKind()) + "/" + ref.GetName()
		if _, err := c.Delete(ctx, ref, client.DeleteOptions{}); err != nil {
			last = err
			failed++
			if len(refs) > 1 {
				fmt.Fprintf(s.Err, "%s: %v\n", name, last)
			}
			continue
		}
		fmt.Fprintf(s.Out, "%s deleted\n", name)
	}
	switch {
	case failed == 1 && len(refs) == 1:
		return last
	case failed > 0:
		return fmt.Errorf("%d of %d objects not deleted", failed, len(refs))
	}
	return nil
}
