package ctl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
)

func init() { commands = append(commands, newInterpret) }

// interpretFlags are the command's inputs; file flags name YAML or JSON files.
type interpretFlags struct {
	operation     string
	customization string
	desired       string
	observed      string
	statusItems   string
	replicas      int64
	output        string
	listBuiltins  bool
}

const interpretLong = `Runs one resource interpreter operation offline, as the hub would.

Without --customization the built-in chain for the object's kind answers
(built-in third-party customizations, then the native rules); with it, that
ResourceInterpreterCustomization comes first, as a RIC in the hub does.

Operations: InterpretReplica, InterpretComponent, ReviseReplica (--replicas),
Retain (--desired and --observed), AggregateStatus (--status-items, a list of
{clusterName, applied, health, status}), InterpretStatus, InterpretHealth,
InterpretDependency. Single-object operations read --desired, or --observed
when only that is given (InterpretStatus and InterpretHealth prefer it).

Output: {"operation": OP, "results": {NAME: VALUE}} with Karmada's result
names (replica, requires, components, revised, retained, status,
aggregatedStatus, healthy, dependencies), or {"operation": OP, "error": "..."}
and exit status 1.`

func newInterpret(s IO) *cobra.Command {
	var f interpretFlags
	cmd := &cobra.Command{
		Use:   "interpret --operation OP [--customization FILE] [--desired FILE] [--observed FILE] [--status-items FILE] [--replicas N] [-o json|yaml]",
		Short: "run a resource interpreter operation on objects in files",
		Long:  interpretLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.output != "json" && f.output != "yaml" {
				return fmt.Errorf("unknown output format %q (want json or yaml)", f.output)
			}
			if f.listBuiltins {
				return listBuiltins(s.Out, f.output)
			}
			replicasSet := cmd.Flags().Changed("replicas")
			op, results, err := interpret(cmd.Context(), f, replicasSet)
			return report(s.Out, f.output, op, results, err)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.operation, "operation", "", "the operation to run (e.g. InterpretReplica)")
	fl.StringVar(&f.customization, "customization", "", "a ResourceInterpreterCustomization file that takes precedence")
	fl.StringVar(&f.desired, "desired", "", "the desired object (resource template)")
	fl.StringVar(&f.observed, "observed", "", "the observed object (as in a member cluster)")
	fl.StringVar(&f.statusItems, "status-items", "", "the member statuses to aggregate")
	fl.Int64Var(&f.replicas, "replicas", 0, "the replica count for ReviseReplica")
	fl.StringVarP(&f.output, "output", "o", "yaml", "output format: json or yaml")
	fl.BoolVar(&f.listBuiltins, "list-builtins", false, "list every built-in kind and its operations, then exit")
	return cmd
}

// canonicalOperation accepts an operation name in any case, as Karmada's
// rule lookup does, and returns its canonical spelling.
func canonicalOperation(name string) (configv1alpha1.InterpreterOperation, error) {
	for _, op := range operations {
		if strings.EqualFold(name, string(op)) {
			return op, nil
		}
	}
	if name == "" {
		return "", fmt.Errorf("--operation is required (one of %s)", operationList())
	}
	return "", fmt.Errorf("unknown operation %q (want one of %s)", name, operationList())
}

func operationList() string {
	names := make([]string, len(operations))
	for i, op := range operations {
		names[i] = string(op)
	}
	return strings.Join(names, ", ")
}

// report prints the outcome in the chosen format. A failed operation prints
// its error in the same envelope and makes the command exit 1.
func report(out io.Writer, format string, op configv1alpha1.InterpreterOperation, results map[string]any, runErr error) error {
	envelope := map[string]any{"operation": string(op)}
	if runErr != nil {
		envelope["error"] = runErr.Error()
	} else {
		envelope["results"] = results
	}
	if err := write(out, format, envelope); err != nil {
		return err
	}
	if runErr != nil {
		return exitError{code: 1}
	}
	return nil
}

// write prints v as indented JSON or as YAML.
func write(out io.Writer, format string, v any) error {
	var raw []byte
	var err error
	if format == "json" {
		raw, err = json.MarshalIndent(v, "", "  ")
		raw = append(raw, '\n')
	} else {
		raw, err = yaml.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	_, err = out.Write(raw)
	return err
}
