package ctl

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/tetherproj/tether/hub/clientapi/offline"
)

func init() { commands = append(commands, newPlacement, newOverrides) }

const placementSimulateLong = `Runs the hub's scheduler offline on one scheduling input, without a hub.

FILE (JSON or YAML, "-" for standard input) is the "input" of a placement
conformance case (api/policy/v1alpha1/testdata/conformance/placement):
placement (a PropagationPolicy spec.placement), applyDefaults (default
true), clusters (name, labels, taints, provider, region, zone, zones,
availableReplicas or resourceSummary, resourceModels, apiEnabled, deleting),
workload (apiVersion, kind, namespace, name, uid, replicas,
resourceRequest), previous (clusters, observedAffinityName,
gracefulEvictionTasks, rescheduleTriggered) and
enableEmptyWorkloadPropagation.

Output: {"clusters": [{"name": N, "replicas": R}, ...], "error": "",
"errorType": ""}, clusters sorted by name. When scheduling fails, clusters
is empty and error and errorType (FitError, UnschedulableError or Error)
say why; the exit status is still 0, because the simulation ran. An input
that cannot be read or decoded exits 1 with the error on standard error.`

func newPlacement(s IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "placement",
		Short: "inspect and simulate where templates run",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newPlacementSimulate(s))
	return cmd
}

func newPlacementSimulate(s IO) *cobra.Command {
	return offlineCommand(s, offlineSpec{
		use: "simulate -f FILE [-o json|yaml]", short: "run the scheduler on a scheduling input file, offline",
		long: placementSimulateLong, fileHelp: "the scheduling input",
		run: func(input []byte) (any, error) { return offline.Simulate(input) },
	})
}

// offlineSpec describes an offline simulation command: it reads one input
// file, runs the hub's own code on it, and prints the result.
type offlineSpec struct {
	use, short, long, fileHelp string
	// run returns what to print, or an error when the input cannot be used.
	run func(input []byte) (any, error)
}

// offlineCommand builds the command of spec with its -f and -o flags.
func offlineCommand(s IO, spec offlineSpec) *cobra.Command {
	var file, output string
	cmd := &cobra.Command{
		Use:   spec.use,
		Short: spec.short,
		Long:  spec.long,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			input, err := readInput(file, s.In)
			if err != nil {
				return err
			}
			res, err := spec.run(input)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			return write(s.Out, output, res)
		},
	}
	addOneFileFlag(cmd, &file, spec.fileHelp+`, JSON or YAML ("-" for standard input)`)
	cmd.Flags().StringVarP(&output, "output", "o", "json", "output format: json or yaml")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func checkOutput(format string) error {
	if format != "json" && format != "yaml" {
		return fmt.Errorf("unknown output format %q (want json or yaml)", format)
	}
	return nil
}

// readInput reads a JSON or YAML file (or standard input for "-") and
// returns it as JSON.
func readInput(path string, in io.Reader) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read input: %w", err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not JSON or YAML: %w", path, err)
	}
	return js, nil
}
