package ctl

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	"github.com/tetherproj/tether/api/codec"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	"github.com/tetherproj/tether/internal/overrides"
)

const overridesSimulateLong = `Applies override policies to an object for one cluster, offline, with the
hub's override engine.

FILE (JSON or YAML, "-" for standard input) is the "input" of an override
conformance case: object (or objectYAML, the object as a YAML string),
cluster (name, labels, annotations, provider, region, zone, zones; an
overrider's valueFrom reads the name, labels and annotations),
clusterOverridePolicies and overridePolicies (full policy objects, Tether's
or Karmada's apiVersion; decoded strictly, defaulted and validated as the
hub does on apply).

Output: {"object": {...}}, the object with the override policies applied
as the hub's renderer applies them, or {"error": "..."} when applying them
fails; the exit status is 0 either way, because the simulation ran. (The
work a cluster receives is also pruned of the hub's metadata and carries
its ownership labels: "tetherctl simulate" shows it whole.) An input that
cannot be read or decoded, or an invalid policy, exits 1 with the error on
standard error.`

func newOverrides(s IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "overrides",
		Short: "simulate override policies",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newOverridesSimulate(s))
	return cmd
}

func newOverridesSimulate(s IO) *cobra.Command {
	return offlineCommand(s, offlineSpec{
		use: "simulate -f FILE [-o json|yaml]", short: "apply override policies to an object for one cluster, offline",
		long: overridesSimulateLong, fileHelp: "the override input",
		run: simulateOverrides,
	})
}

// simulateOverrides applies the override input's policies to its object
// with overrides.Apply, the function hub/render's Render applies them with:
// the overridden object, or the error applying them.
func simulateOverrides(input []byte) (any, error) {
	in, err := DecodeOverrideInput(input)
	if err != nil {
		return nil, err
	}
	res, err := overrides.Apply(in.Object, in.Cluster, in.ClusterOverridePolicies, in.OverridePolicies)
	if err != nil {
		return map[string]any{"error": err.Error()}, nil
	}
	return map[string]any{"object": res.Object.Object}, nil
}

// OverrideInput is a decoded override case input: what overrides.Apply
// takes.
type OverrideInput struct {
	Object                  *unstructured.Unstructured
	Cluster                 *clusterv1alpha1.Cluster
	ClusterOverridePolicies []policyv1alpha1.ClusterOverridePolicy
	OverridePolicies        []policyv1alpha1.OverridePolicy
}

// overrideFile is the JSON shape of an override case input.
type overrideFile struct {
	Object     json.RawMessage `json:"object"`
	ObjectYAML string          `json:"objectYAML"`
	Cluster    struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Provider    string            `json:"provider"`
		Region      string            `json:"region"`
		Zone        string            `json:"zone"`
		Zones       []string          `json:"zones"`
	} `json:"cluster"`
	ClusterOverridePolicies []json.RawMessage `json:"clusterOverridePolicies"`
	OverridePolicies        []json.RawMessage `json:"overridePolicies"`
}

// DecodeOverrideInput strictly decodes the JSON of an override case input;
// its policies are decoded, defaulted and validated as the hub's Apply
// does.
func DecodeOverrideInput(js []byte) (*OverrideInput, error) {
	var f overrideFile
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode override input: %w", err)
	}
	in := &OverrideInput{Cluster: &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: f.Cluster.Name, Labels: f.Cluster.Labels, Annotations: f.Cluster.Annotations},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: f.Cluster.Provider, Region: f.Cluster.Region, Zone: f.Cluster.Zone, Zones: f.Cluster.Zones},
	}}
	var err error
	if in.Object, err = decodeOverrideObject(f); err != nil {
		return nil, err
	}
	for i, raw := range f.ClusterOverridePolicies {
		p, err := decodePolicy[*policyv1alpha1.ClusterOverridePolicy](raw, fmt.Sprintf("clusterOverridePolicies[%d]", i))
		if err != nil {
			return nil, err
		}
		in.ClusterOverridePolicies = append(in.ClusterOverridePolicies, *p)
	}
	for i, raw := range f.OverridePolicies {
		p, err := decodePolicy[*policyv1alpha1.OverridePolicy](raw, fmt.Sprintf("overridePolicies[%d]", i))
		if err != nil {
			return nil, err
		}
		in.OverridePolicies = append(in.OverridePolicies, *p)
	}
	return in, nil
}

func decodeOverrideObject(f overrideFile) (*unstructured.Unstructured, error) {
	raw := []byte(f.Object)
	if f.ObjectYAML != "" {
		var err error
		if raw, err = yaml.YAMLToJSON([]byte(f.ObjectYAML)); err != nil {
			return nil, fmt.Errorf("objectYAML: %w", err)
		}
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("object: required (or objectYAML)")
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("object: %w", err)
	}
	return obj, nil
}

// decodePolicy decodes one policy of type T strictly, with defaults, and
// refuses it when invalid.
func decodePolicy[T codec.Object](raw json.RawMessage, where string) (T, error) {
	var zero T
	obj, err := codec.Decode(raw)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", where, err)
	}
	p, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("%s: a %s is not allowed here", where, obj.GetObjectKind().GroupVersionKind().Kind)
	}
	p.SetDefaults()
	if errs := p.Validate(); len(errs) > 0 {
		return zero, fmt.Errorf("%s: %w", where, errs.ToAggregate())
	}
	return p, nil
}
