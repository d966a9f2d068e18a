package ctl

// Shell completion. Cobra's built-in "completion bash|zsh|fish|powershell"
// writes the scripts; this file teaches them tetherctl's arguments: kinds
// (built-in, Tether's, and those of the CRDs the hub holds) for get,
// describe, delete and placement, then the names of that kind's objects
// (or of member clusters) as the hub lists them. A hub that cannot be
// reached only leaves the hub's part out: completion never prints errors.

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherproj/tether/client"
)

// completionTimeout bounds the hub calls of one completion (seconds, as a
// duration), so that a Tab press against an unreachable hub returns.
const completionTimeout = 3 * time.Second

func init() { rootHooks = append(rootHooks, addCompletion) }

// addCompletion sets the argument completion of the commands that name
// objects.
func addCompletion(root *cobra.Command, _ IO) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "get", "describe", "delete":
			c.ValidArgsFunction = completeKindThenName
		case "placement":
			c.ValidArgsFunction = completeKindSlashName
		}
	}
}

// completeKindThenName completes KIND, then NAME (get, describe, delete).
func completeKindThenName(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := completionContext(cmd)
	defer cancel()
	switch len(args) {
	case 0:
		return completeKinds(ctx, "", false), cobra.ShellCompDirectiveNoFileComp
	case 1:
		return objectNames(ctx, cmd, args[0], ""), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completeKindSlashName completes KIND/ then KIND/NAME (placement).
func completeKindSlashName(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := completionContext(cmd)
	defer cancel()
	kind, _, ok := strings.Cut(toComplete, "/")
	if !ok {
		return completeKinds(ctx, "/", true), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	return objectNames(ctx, cmd, kind, kind+"/"), cobra.ShellCompDirectiveNoFileComp
}

// completionContext carries --config to dial (a completion does not run
// the root's PersistentPreRunE) and bounds the completion's hub calls.
func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := contextOf(cmd)
	if f := cmd.Flag("config"); f != nil {
		ctx = context.WithValue(ctx, configKey{}, f.Value.String())
	}
	return context.WithTimeout(ctx, completionTimeout)
}

// completeKinds lists the plurals of the built-in and Tether kinds,
// "clusters", and those of the CRDs the hub holds, each with suffix;
// templatesOnly leaves out clusters and Tether's kinds (which have no
// placement).
func completeKinds(ctx context.Context, suffix string, templatesOnly bool) []cobra.Completion {
	seen := map[string]bool{"clusters": !templatesOnly}
	for _, k := range kindsByName {
		seen[k.plural] = k.template || !templatesOnly
	}
	if c, err := dial(ctx); err == nil {
		if crds, err := crdKinds(ctx, c); err == nil {
			for _, k := range crds {
				seen[k.spec.plural] = true
			}
		}
		c.Close()
	}
	out := make([]cobra.Completion, 0, len(seen))
	for p, ok := range seen {
		if ok {
			out = append(out, p+suffix)
		}
	}
	slices.Sort(out)
	return out
}

// objectNames lists the names of kind's objects in the command's -n
// namespace (or of member clusters), each after prefix: the first page the
// hub returns, enough to complete from.
func objectNames(ctx context.Context, cmd *cobra.Command, kind, prefix string) []cobra.Completion {
	c, err := dial(ctx)
	if err != nil {
		return nil
	}
	defer c.Close()
	var names []string
	if isClusterKind(kind) {
		clusters, err := c.ListClusters(ctx, client.ClusterSelector{})
		if err != nil {
			return nil
		}
		for _, cl := range clusters {
			names = append(names, cl.GetName())
		}
	} else {
		k, err := resolveKind(ctx, kind)
		if err != nil {
			return nil
		}
		ns := "default"
		if f := cmd.Flag("namespace"); f != nil && f.Value.String() != "" {
			ns = f.Value.String()
		}
		sel := client.Selector{APIVersion: k.apiVersion, Kind: k.kind}
		if k.namespaced {
			sel.Namespace = ns
		}
		page, err := c.ListPage(ctx, sel, 0, "")
		if err != nil {
			return nil
		}
		for _, o := range page.Objects {
			names = append(names, o.GetRef().GetName())
		}
	}
	out := make([]cobra.Completion, 0, len(names))
	for _, n := range names {
		out = append(out, prefix+n)
	}
	return out
}
