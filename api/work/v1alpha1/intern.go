package v1alpha1

import (
	"encoding/json"
	"unique"
)

// Decode decodes a stored binding with its names interned (InternNames),
// as the hub's controllers keep it.
func Decode(data []byte) (*ResourceBinding, error) {
	b := &ResourceBinding{}
	if err := json.Unmarshal(data, b); err != nil {
		return nil, err
	}
	b.InternNames()
	return b, nil
}

// InternNames replaces the cluster names b holds (targets, eviction tasks,
// the bindings requiring it, aggregated status items) with canonical
// copies (package unique), which the process holds once whoever decoded
// them. A binding placed on 1,000 clusters names each of them in every
// decoded copy the hub's controllers keep (detector, scheduler, renderer,
// aggregator), and every status write of it is decoded again.
func (b *ResourceBinding) InternNames() {
	for i := range b.Spec.Clusters {
		intern(&b.Spec.Clusters[i].Name)
	}
	for i := range b.Spec.GracefulEvictionTasks {
		intern(&b.Spec.GracefulEvictionTasks[i].FromCluster)
	}
	for i := range b.Spec.RequiredBy {
		for j := range b.Spec.RequiredBy[i].Clusters {
			intern(&b.Spec.RequiredBy[i].Clusters[j].Name)
		}
	}
	for i := range b.Status.AggregatedStatus {
		intern(&b.Status.AggregatedStatus[i].ClusterName)
	}
}

func intern(s *string) { *s = unique.Make(*s).Value() }
