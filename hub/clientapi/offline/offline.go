// Package offline runs the hub's scheduler without a hub, for
// `tetherctl placement simulate`, and owns the one adapter from a schedule
// case input (the "input" of a placement conformance case, see
// api/policy/v1alpha1/testdata/conformance/placement/README.md) to
// scheduler.Input.
//
// It imports hub/scheduler and api/ only: no store, no gRPC server, so
// tetherctl stays small.
package offline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/tetherproj/tether/api/cluster/v1alpha1"
	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	policyv1alpha1 "github.com/tetherproj/tether/api/policy/v1alpha1"
	workv1alpha1 "github.com/tetherproj/tether/api/work/v1alpha1"
	"github.com/tetherproj/tether/hub/scheduler"
)

// Placement is what `tetherctl placement simulate` prints: the target
// clusters with their replicas, or the scheduling error and its type
// (FitError, UnschedulableError or Error). The field names are a fixed
// contract that tools parse.
type Placement struct {
	Clusters  []PlacedCluster `json:"clusters"`
	Error     string          `json:"error"`
	ErrorType string          `json:"errorType"`
}

// PlacedCluster is one target cluster of a Placement.
type PlacedCluster struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

// ScheduleFile is the JSON shape of a schedule case input.
type ScheduleFile struct {
	Placement json.RawMessage `json:"placement"`
	// ApplyDefaults (default true) applies the placement's API defaults.
	ApplyDefaults *bool             `json:"applyDefaults,omitempty"`
	Clusters      []ScheduleCluster `json:"clusters"`
	Workload      ScheduleWorkload  `json:"workload"`
	Previous      SchedulePrevious  `json:"previous"`
	// EnableEmptyWorkloadPropagation keeps selected clusters with 0 replicas.
	EnableEmptyWorkloadPropagation bool `json:"enableEmptyWorkloadPropagation,omitempty"`
	// Runs is how often Karmada was run to produce a case; ignored.
	Runs int `json:"runs,omitempty"`
}

// ScheduleCluster is one cluster of a schedule input.
type ScheduleCluster struct {
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

// ScheduleWorkload is the workload of a schedule input.
type ScheduleWorkload struct {
	APIVersion      string              `json:"apiVersion"`
	Kind            string              `json:"kind"`
	Namespace       string              `json:"namespace,omitempty"`
	Name            string              `json:"name"`
	UID             string              `json:"uid,omitempty"`
	Replicas        int32               `json:"replicas,omitempty"`
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
}

// SchedulePrevious is the binding's earlier state in a schedule input.
type SchedulePrevious struct {
	Clusters             []PlacedCluster `json:"clusters,omitempty"`
	ObservedAffinityName string          `json:"observedAffinityName,omitempty"`
	// GracefulEvictionTasks are binding eviction tasks; only fromCluster
	// matters to the scheduler.
	GracefulEvictionTasks []workv1alpha1.GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`
	RescheduleTriggered   bool                                `json:"rescheduleTriggered,omitempty"`
}

// ScheduleInput strictly decodes the JSON of a schedule case input (unknown
// fields are errors) into the scheduler's input, applying the placement's
// API defaults unless applyDefaults is false.
func ScheduleInput(js []byte) (scheduler.Input, error) {
	var f ScheduleFile
	if err := strictDecode(js, &f); err != nil {
		return scheduler.Input{}, fmt.Errorf("decode schedule input: %w", err)
	}
	var p policyv1alpha1.Placement
	if len(f.Placement) > 0 {
		if err := strictDecode(f.Placement, &p); err != nil {
			return scheduler.Input{}, fmt.Errorf("decode placement: %w", err)
		}
	}
	if f.ApplyDefaults == nil || *f.ApplyDefaults {
		p.SetDefaults()
	}
	in := scheduler.Input{Placement: p, EnableEmptyWorkloadPropagation: f.EnableEmptyWorkloadPropagation}
	for _, c := range f.Clusters {
		in.Clusters = append(in.Clusters, scheduler.Cluster{
			Name: c.Name, Labels: c.Labels, Taints: c.Taints,
			Provider: c.Provider, Region: c.Region, Zone: c.Zone, Zones: c.Zones,
			AvailableReplicas: c.AvailableReplicas, ResourceSummary: c.ResourceSummary, ResourceModels: c.ResourceModels,
			APIEnabled: c.APIEnabled == nil || *c.APIEnabled, Deleting: c.Deleting,
		})
	}
	w := f.Workload
	in.Workload = scheduler.Workload{APIVersion: w.APIVersion, Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, UID: w.UID, Replicas: w.Replicas}
	if len(w.ResourceRequest) > 0 {
		in.Workload.Requirements = &configv1alpha1.ReplicaRequirements{ResourceRequest: w.ResourceRequest}
	}
	in.Previous = scheduler.Previous{ObservedAffinityName: f.Previous.ObservedAffinityName, RescheduleTriggered: f.Previous.RescheduleTriggered}
	for _, tc := range f.Previous.Clusters {
		in.Previous.Clusters = append(in.Previous.Clusters, scheduler.TargetCluster{Name: tc.Name, Replicas: tc.Replicas})
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

// Simulate schedules a schedule case input: the clusters sorted by name, or
// the error and its type. It returns an error only when the input cannot be
// used; a placement that fails is a result with Error set.
func Simulate(js []byte) (Placement, error) {
	in, err := ScheduleInput(js)
	if err != nil {
		return Placement{}, err
	}
	res, err := scheduler.Schedule(in)
	out := Placement{Clusters: []PlacedCluster{}}
	if err != nil {
		out.Error, out.ErrorType = err.Error(), ErrorType(err)
		return out, nil
	}
	for _, tc := range res.Clusters {
		out.Clusters = append(out.Clusters, PlacedCluster{Name: tc.Name, Replicas: tc.Replicas})
	}
	sort.Slice(out.Clusters, func(i, j int) bool { return out.Clusters[i].Name < out.Clusters[j].Name })
	return out, nil
}

// ErrorType names a Schedule error as the conformance cases do:
// FitError, UnschedulableError or Error.
func ErrorType(err error) string {
	var fit *scheduler.FitError
	var u *scheduler.UnschedulableError
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
