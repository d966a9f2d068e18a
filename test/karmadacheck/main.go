// Command karmadacheck runs Karmada v1.18.2's own override manager
// (pkg/util/overridemanager, with a controller-runtime fake client holding
// the case's cluster and policies) and its OverridePolicy validation on the
// input of override conformance cases, and writes Karmada's result into
// each case's "expected" and "karmada" fields.
//
// Usage: go run . CASE.json...
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/overridemanager"
	"github.com/karmada-io/karmada/pkg/util/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
)

// caseOut is a case file in the order of the fields of the placement
// README; the harness rewrites expected and karmada.
type caseOut struct {
	Name        string          `json:"name"`
	Kind        string          `json:"kind"`
	Description string          `json:"description"`
	Conformance string          `json:"conformance"`
	Note        string          `json:"note,omitempty"`
	Input       json.RawMessage `json:"input"`
	Expected    map[string]any  `json:"expected"`
	Karmada     map[string]any  `json:"karmada"`
}

func main() {
	for _, path := range os.Args[1:] {
		if err := run(path); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func run(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var c struct {
		Input struct {
			Object                  json.RawMessage   `json:"object"`
			Cluster                 json.RawMessage   `json:"cluster"`
			ClusterOverridePolicies []json.RawMessage `json:"clusterOverridePolicies"`
			OverridePolicies        []json.RawMessage `json:"overridePolicies"`
		} `json:"input"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	var whole caseOut
	if err := json.Unmarshal(raw, &whole); err != nil {
		return err
	}
	var cl struct {
		Name     string            `json:"name"`
		Labels   map[string]string `json:"labels"`
		Provider string            `json:"provider"`
		Region   string            `json:"region"`
		Zone     string            `json:"zone"`
		Zones    []string          `json:"zones"`
	}
	if err := json.Unmarshal(c.Input.Cluster, &cl); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	_ = clusterv1alpha1.Install(scheme)
	_ = policyv1alpha1.Install(scheme)
	objs := []client.Object{&clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: cl.Name, Labels: cl.Labels},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: cl.Provider, Region: cl.Region, Zone: cl.Zone, Zones: cl.Zones},
	}}
	for _, p := range c.Input.ClusterOverridePolicies {
		o := &policyv1alpha1.ClusterOverridePolicy{}
		if err := strictJSON(p, o); err != nil {
			return err
		}
		if errs := validation.ValidateOverrideSpec(&o.Spec, ""); len(errs) > 0 {
			return fmt.Errorf("Karmada refuses ClusterOverridePolicy %s: %v", o.Name, errs.ToAggregate())
		}
		objs = append(objs, o)
	}
	for _, p := range c.Input.OverridePolicies {
		o := &policyv1alpha1.OverridePolicy{}
		if err := strictJSON(p, o); err != nil {
			return err
		}
		for i := range o.Spec.ResourceSelectors { // Karmada's mutating webhook
			if o.Spec.ResourceSelectors[i].Namespace == "" {
				o.Spec.ResourceSelectors[i].Namespace = o.Namespace
			}
		}
		if errs := validation.ValidateOverrideSpec(&o.Spec, o.Namespace); len(errs) > 0 {
			return fmt.Errorf("Karmada refuses OverridePolicy %s: %v", o.Name, errs.ToAggregate())
		}
		objs = append(objs, o)
	}
	cli := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	rec := record.NewFakeRecorder(100)
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(c.Input.Object); err != nil {
		return err
	}
	cops, ops, applyErr := overridemanager.New(cli, rec).ApplyOverridePolicies(obj, cl.Name)
	close(rec.Events)
	var order []string
	for e := range rec.Events {
		order = append(order, e)
	}
	karmada := map[string]any{"karmadaVersion": "v1.18.2", "applicationOrder": order}
	expected := map[string]any{"error": ""}
	if applyErr != nil {
		karmada["error"] = applyErr.Error()
		expected["object"], expected["error"] = nil, applyErr.Error()
	} else {
		y, err := yaml.Marshal(obj.Object)
		if err != nil {
			return err
		}
		karmada["object"], karmada["objectYAML"] = obj.Object, string(y)
		expected["object"] = obj.Object
		if cops != nil {
			karmada["appliedClusterOverrides"] = cops.AppliedItems
		}
		if ops != nil {
			karmada["appliedOverrides"] = ops.AppliedItems
		}
	}
	whole.Expected, whole.Karmada = expected, karmada
	out, err := json.MarshalIndent(whole, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

func strictJSON(raw []byte, v any) error {
	if err := yaml.UnmarshalStrict(raw, v); err != nil {
		return fmt.Errorf("decode %s: %w", strings.TrimSpace(string(raw[:min(len(raw), 80)])), err)
	}
	return nil
}
