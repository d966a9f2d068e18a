package placement

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
)

// The schedule case input is the "input" of a placement conformance case
// (api/policy/v1alpha1/testdata/conformance/placement/README.md): a
// placement, clusters with their capacity, a workload and the previous
// result. `tetherctl placement simulate` reads it, and the conformance
// tests run through the same decoder.

// CaseInput is the JSON shape of a schedule case input.
type CaseInput struct {
	Placement json.RawMessage `json:"placement"`
	// ApplyDefaults (default true) applies the placement's API defaults.
	ApplyDefaults *bool         `json:"applyDefaults,omitempty"`
	Clusters      []CaseCluster `json:"clusters"`
	Workload      CaseWorkload  `json:"workload"`
	Previous      CasePrevious  `json:"previous"`
	// EnableEmptyWorkloadPropagation keeps selected clusters with 0 replicas.
	EnableEmptyWorkloadPropagation bool `json:"enableEmptyWorkloadPropagation,omitempty"`
	// Runs is how often Karmada was run to produce a case; ignored.
	Runs int `json:"runs,omitempty"`
}

// CaseCluster is one cluster of a schedule input.
type CaseCluster struct {
	Name              string                           `json:"name"`
	Labels            map[string]string                `json:"labels,omitempty"`
	Taints            []corev1.Taint                   `json:"taints,omitempty"`
	Provider          string                           `json:"provider,omitempty"`
	Region            string                           `json:"region,omitempty"`
	Zone              string                           `json:"zone,omitempty"`
	Zones             []string                         `json:"zones,omitempty"`
	AvailableReplicas *int32                           `json:"availableReplicas,omitempty"`
	ResourceSummary   *clusterv1alpha1.ResourceSummary `json:"resourceSummary,omitempty"`
	ResourceModels    []clusterv1alpha1.ResourceModel  `json:"resourceModels,omitempty"`
	// APIEnabled defaults to true.
	APIEnabled *bool `json:"apiEnabled,omitempty"`
	Deleting   bool  `json:"deleting,omitempty"`
}

// CaseWorkload is the workload of a schedule input.
type CaseWorkload struct {
	APIVersion      string              `json:"apiVersion"`
	Kind            string              `json:"kind"`
	Namespace       string              `json:"namespace,omitempty"`
	Name            string              `json:"name"`
	UID             string              `json:"uid,omitempty"`
	Replicas        int32               `json:"replicas,omitempty"`
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
}

// CasePrevious is the binding's earlier state in a schedule input.
type CasePrevious struct {
	Clusters             []CaseTarget `json:"clusters,omitempty"`
	ObservedAffinityName string       `json:"observedAffinityName,omitempty"`
	// GracefulEvictionTasks are binding eviction tasks; only fromCluster
	// matters to the scheduler.
	GracefulEvictionTasks []workv1alpha1.GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`
	RescheduleTriggered   bool                                `json:"rescheduleTriggered,omitempty"`
}

// CaseTarget is one cluster of the previous result.
type CaseTarget struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas,omitempty"`
}

// DecodeCaseInput strictly decodes the JSON of a schedule case input (unknown
// fields are errors) into the scheduler's input, applying the placement's
// API defaults unless applyDefaults is false.
func DecodeCaseInput(js []byte) (Input, error) {
	var f CaseInput
	if err := strictDecode(js, &f); err != nil {
		return Input{}, fmt.Errorf("decode schedule input: %w", err)
	}
	var p policyv1alpha1.Placement
	if len(f.Placement) > 0 {
		if err := strictDecode(f.Placement, &p); err != nil {
			return Input{}, fmt.Errorf("decode placement: %w", err)
		}
	}
	if f.ApplyDefaults == nil || *f.ApplyDefaults {
		p.SetDefaults()
	}
	in := Input{Placement: p, EnableEmptyWorkloadPropagation: f.EnableEmptyWorkloadPropagation}
	for _, c := range f.Clusters {
		in.Clusters = append(in.Clusters, Cluster{
			Name: c.Name, Labels: c.Labels, Taints: c.Taints,
			Provider: c.Provider, Region: c.Region, Zone: c.Zone, Zones: c.Zones,
			AvailableReplicas: c.AvailableReplicas, ResourceSummary: c.ResourceSummary, ResourceModels: c.ResourceModels,
			APIEnabled: c.APIEnabled == nil || *c.APIEnabled, Deleting: c.Deleting,
		})
	}
	w := f.Workload
	in.Workload = Workload{APIVersion: w.APIVersion, Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, UID: w.UID, Replicas: w.Replicas}
	if len(w.ResourceRequest) > 0 {
		in.Workload.Requirements = &configv1alpha1.ReplicaRequirements{ResourceRequest: w.ResourceRequest}
	}
	in.Previous = Previous{ObservedAffinityName: f.Previous.ObservedAffinityName, RescheduleTriggered: f.Previous.RescheduleTriggered}
	for _, tc := range f.Previous.Clusters {
		in.Previous.Clusters = append(in.Previous.Clusters, TargetCluster{Name: tc.Name, Replicas: tc.Replicas})
	}
	for _, t := range f.Previous.GracefulEvictionTasks {
		in.Previous.EvictingClusters = append(in.Previous.EvictingClusters, t.FromCluster)
	}
	return in, nil
}

func strictDecode(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ErrorType names a Schedule error as the conformance cases do:
// FitError, UnschedulableError or Error.
func ErrorType(err error) string {
	var fit *FitError
	var u *UnschedulableError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &fit):
		return "FitError"
	case errors.As(err, &u):
		return "UnschedulableError"
	}
	return "Error"
}
