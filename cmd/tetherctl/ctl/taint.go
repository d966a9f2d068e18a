package ctl

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

func init() { commands = append(commands, newTaint) }

const taintLong = `Adds or removes taints of a member cluster, as kubectl taint does for
nodes: KEY=VALUE:EFFECT adds (replacing the taint of that key and effect),
KEY[:EFFECT]- removes (every effect of the key when none is given).
EFFECT is NoSchedule (place nothing new), PreferNoSchedule (avoid) or
NoExecute (move away what does not tolerate it: a drain).
"taint cluster NAME ..." and "taint cluster/NAME ..." are the same.`

func newTaint(s IO) *cobra.Command {
	return &cobra.Command{
		Use:   "taint [cluster] NAME KEY[=VALUE]:EFFECT[-] ...",
		Short: "add or remove a cluster's taints",
		Long:  taintLong,
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			args = withoutClusterKind(args)
			if len(args) < 2 {
				return fmt.Errorf("taint: want taint [cluster] NAME KEY[=VALUE]:EFFECT[-] ...")
			}
			req := &hubv1.TaintRequest{Name: args[0]}
			for _, a := range args[1:] {
				t, remove, err := parseTaint(a)
				if err != nil {
					return err
				}
				if remove {
					req.Remove = append(req.Remove, t)
				} else {
					req.Add = append(req.Add, t)
				}
			}
			return taint(contextOf(cmd), s, req)
		},
	}
}

func taint(ctx context.Context, s IO, req *hubv1.TaintRequest) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	cl, err := c.Taint(ctx, req.GetName(), req.GetAdd(), req.GetRemove())
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "cluster/%s tainted: %s\n", req.GetName(), taintString(cl.GetTaints()))
	return nil
}

// withoutClusterKind drops a leading "cluster" (or "clusters") from
// "taint cluster NAME SPEC...", the kubectl-like form, and splits
// "cluster/NAME". A cluster itself named "cluster" is still taken as the
// name in "taint cluster SPEC...": a cluster name (a DNS subdomain) has no
// "=" or ":" and does not end with "-", which every taint spec does.
func withoutClusterKind(args []string) []string {
	if kind, name, ok := strings.Cut(args[0], "/"); ok && isClusterKind(kind) {
		return append([]string{name}, args[1:]...)
	}
	if len(args) >= 3 && isClusterKind(args[0]) && !strings.ContainsAny(args[1], "=:") && !strings.HasSuffix(args[1], "-") {
		return args[1:]
	}
	return args
}

// parseTaint reads KEY[=VALUE]:EFFECT, or KEY[:EFFECT]- for a removal.
func parseTaint(arg string) (*hubv1.Taint, bool, error) {
	spec, remove := strings.CutSuffix(arg, "-")
	keyValue, effect, hasEffect := strings.Cut(spec, ":")
	key, value, _ := strings.Cut(keyValue, "=")
	if key == "" {
		return nil, false, fmt.Errorf("taint %q: want KEY[=VALUE]:EFFECT or KEY[:EFFECT]-", arg)
	}
	t := &hubv1.Taint{Key: key, Value: value}
	switch {
	case hasEffect:
		e, ok := effectByName(effect)
		if !ok {
			return nil, false, fmt.Errorf("taint %q: effect %q: want NoSchedule, PreferNoSchedule or NoExecute", arg, effect)
		}
		t.Effect = e
	case !remove:
		return nil, false, fmt.Errorf("taint %q: an added taint needs an effect: KEY[=VALUE]:NoSchedule, PreferNoSchedule or NoExecute", arg)
	}
	return t, remove, nil
}

func effectByName(name string) (hubv1.TaintEffect, bool) {
	for e, n := range effectNames {
		if n == name {
			return e, true
		}
	}
	return hubv1.TaintEffect_TAINT_EFFECT_UNSPECIFIED, false
}
