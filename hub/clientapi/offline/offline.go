// Package offline runs the hub's scheduler without a hub, for
// `tetherctl placement simulate`: it decodes a schedule case input with
// placement.DecodeCaseInput and prints the result in the command's fixed
// JSON shape.
//
// It imports hub/placement only: no store, no gRPC server, so
// tetherctl stays small.
package offline

import (
	"sort"

	"github.com/tetherproj/tether/hub/placement"
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

// Simulate schedules a schedule case input: the clusters sorted by name, or
// the error and its type. It returns an error only when the input cannot be
// used; a placement that fails is a result with Error set.
func Simulate(js []byte) (Placement, error) {
	in, err := placement.DecodeCaseInput(js)
	if err != nil {
		return Placement{}, err
	}
	res, err := placement.Schedule(in)
	out := Placement{Clusters: []PlacedCluster{}}
	if err != nil {
		out.Error, out.ErrorType = err.Error(), placement.ErrorType(err)
		return out, nil
	}
	for _, tc := range res.Clusters {
		out.Clusters = append(out.Clusters, PlacedCluster{Name: tc.Name, Replicas: tc.Replicas})
	}
	sort.Slice(out.Clusters, func(i, j int) bool { return out.Clusters[i].Name < out.Clusters[j].Name })
	return out, nil
}
