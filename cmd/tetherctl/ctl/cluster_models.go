package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	hubv1 "github.com/tetherproj/tether/api/gen/tether/hub/v1"
)

// cluster models extends the "cluster" command (cluster_admin.go).
func init() { rootHooks = append(rootHooks, addClusterModels) }

const clusterModelsLong = `Sets the resource models of a member cluster (Karmada's Cluster
spec.resourceModels): grades of node size, each a range [min, max) per
resource, the same resources in every grade, the lowest grade starting at 0
and each grade starting where the previous one ends. The hub sends them to
the cluster's agent, which counts its nodes per grade; the scheduler then
estimates how many replicas fit from the grades, as Karmada's general
estimator does, instead of from the cluster's summed free resources.

FILE ("-" for standard input) holds the models as YAML or JSON: a Cluster
manifest (its spec.resourceModels), an object with resourceModels, or the
list itself:

  - grade: 0
    ranges:
    - {name: cpu, min: "0", max: "4"}
    - {name: memory, min: "0", max: 16Gi}
  - grade: 1
    ranges:
    - {name: cpu, min: "4", max: "64"}
    - {name: memory, min: 16Gi, max: 256Gi}

--clear removes the models.`

func addClusterModels(root *cobra.Command, s IO) {
	for _, c := range root.Commands() {
		if c.Name() == "cluster" {
			c.AddCommand(newClusterModels(s))
		}
	}
}

func newClusterModels(s IO) *cobra.Command {
	var file string
	var clearModels bool
	var rev int64
	cmd := &cobra.Command{
		Use:   "models NAME (-f FILE | --clear) [--resource-version REV]",
		Short: "set the resource models (node grades) the scheduler estimates a cluster's capacity with",
		Long:  clusterModelsLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (file == "") == !clearModels {
				return fmt.Errorf("cluster models: give exactly one of -f FILE and --clear")
			}
			req := &hubv1.SetResourceModelsRequest{Name: args[0], ResourceVersion: rev}
			if file != "" {
				models, err := readModels(s.In, file)
				if err != nil {
					return err
				}
				req.Models = models
			}
			return setModels(contextOf(cmd), s, req)
		},
	}
	addOneFileFlag(cmd, &file, `file with the models ("-": standard input)`)
	cmd.Flags().BoolVar(&clearModels, "clear", false, "remove the models")
	cmd.Flags().Int64Var(&rev, "resource-version", 0, "change only if the cluster is still at this revision")
	return cmd
}

func setModels(ctx context.Context, s IO, req *hubv1.SetResourceModelsRequest) error {
	c, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	cl, err := c.SetResourceModels(ctx, req.GetName(), req.GetModels(), req.GetResourceVersion())
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "cluster/%s resource models set: %d grades\n", req.GetName(), len(cl.GetResourceModels()))
	return nil
}

// modelsFile is what readModels accepts: a Cluster (spec.resourceModels),
// {resourceModels: [...]}, or the list.
type modelsFile struct {
	Spec struct {
		ResourceModels []modelYAML `json:"resourceModels"`
	} `json:"spec"`
	ResourceModels []modelYAML `json:"resourceModels"`
}

type modelYAML struct {
	Grade  uint32 `json:"grade"`
	Ranges []struct {
		Name string       `json:"name"`
		Min  quantityText `json:"min"`
		Max  quantityText `json:"max"`
	} `json:"ranges"`
}

// quantityText is a quantity as written: a string ("16Gi") or a number
// (4), kept as its text so that the hub parses it.
type quantityText string

func (q *quantityText) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*q = quantityText(s)
		return nil
	}
	*q = quantityText(b)
	return nil
}

// maxModelsFileBytes bounds the models file read (bytes).
const maxModelsFileBytes = 1 << 20

// readModels reads the models from path ("-": in).
func readModels(in io.Reader, path string) ([]*hubv1.ResourceModel, error) {
	var r io.Reader = in
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxModelsFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxModelsFileBytes {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, maxModelsFileBytes)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var list []modelYAML
	if len(js) > 0 && js[0] == '[' {
		err = json.Unmarshal(js, &list)
	} else {
		var f modelsFile
		err = json.Unmarshal(js, &f)
		list = append(f.Spec.ResourceModels, f.ResourceModels...)
	}
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: no resource models found (use --clear to remove them)", path)
	}
	out := make([]*hubv1.ResourceModel, 0, len(list))
	for _, m := range list {
		pm := &hubv1.ResourceModel{Grade: m.Grade}
		for _, r := range m.Ranges {
			pm.Ranges = append(pm.Ranges, &hubv1.ResourceModelRange{Name: r.Name, Min: string(r.Min), Max: string(r.Max)})
		}
		out = append(out, pm)
	}
	return out, nil
}
